import { Injectable } from '@nestjs/common';
import { OnOutboxEvent, OutboxInbox, OutboxRelayHost, type OutboxEnvelope } from '@nest-outbox/outbox';
import { isolatedDatabase, type TestDatabase } from '../support/outbox-harness';
import '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';
import { startHandlersApp } from './in-process.harness';

const runs: string[] = [];

@Injectable()
class LabelPrinter {
  constructor(private readonly inbox: OutboxInbox) {}

  @OnOutboxEvent('parcels.parcel-registered', { name: 'shipping.print-label', inbox: true })
  async print(envelope: OutboxEnvelope): Promise<void> {
    runs.push(envelope.id);
    await this.inbox.manager().query(`INSERT INTO printed_labels (message_id) VALUES ('${envelope.id}')`);
  }
}

@Injectable()
class LonelyPrinter {
  @OnOutboxEvent('parcels.parcel-registered', { name: 'shipping.print-label', inbox: true })
  print(): void {}
}

describe.each<TestDatabase>(['postgres', 'sqlite'])('in-process handlers with the inbox on %s', (database) => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let app: Awaited<ReturnType<typeof startHandlersApp>> | undefined;

  beforeEach(async () => {
    runs.length = 0;
    isolated = await isolatedDatabase(database);
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await isolated.drop();
  });

  it('does not run the handler again when its row is delivered again after the work committed', async () => {
    app = await startHandlersApp(isolated.options, [LabelPrinter], {}, true);
    await app.dataSource.query('CREATE TABLE printed_labels (message_id varchar(36) NOT NULL)');
    const [id] = await app.add('p-1', [{ seq: 0 }]);
    await waitFor('the row published', async () => (await app!.rows()).find((row) => row.id === id && row.status === 'published'));

    // As if the relay had crashed after the handler committed and before the row was settled.
    const table = '"outbox_messages"';
    await app.dataSource.query(`UPDATE ${table} SET status = 'pending', published_at = NULL WHERE id = '${id}'`);
    await app.module.get(OutboxRelayHost).drain();
    await waitFor('the row published again', async () => (await app!.rows()).find((row) => row.id === id && row.status === 'published'));

    expect(runs).toEqual([id]);
    const [{ n }] = await app.dataSource.query(`SELECT COUNT(*) AS n FROM printed_labels WHERE message_id = '${id}'`);
    expect(Number(n)).toBe(1);
  });

  it('refuses { inbox: true } when OutboxInboxModule is not imported, naming the handler', async () => {
    await expect(startHandlersApp(isolated.options, [LonelyPrinter])).rejects.toThrow(
      /@OnOutboxEvent\(\) on LonelyPrinter\.print asks for \{ inbox: true \}, but OutboxInboxModule is not imported/,
    );
  });
});
