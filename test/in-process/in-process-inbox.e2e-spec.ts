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

let jammed = true;

@Injectable()
class JammedPrinter {
  constructor(private readonly inbox: OutboxInbox) {}

  @OnOutboxEvent('parcels.parcel-registered', { name: 'shipping.jammed-printer', inbox: true })
  async print(envelope: OutboxEnvelope): Promise<void> {
    if (jammed) throw new Error('paper jam');
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

  it('sets aside a message its handler failed poison.maxAttempts times (the row is published, not dead), and replays it', async () => {
    app = await startHandlersApp(isolated.options, [JammedPrinter], { maxAttempts: 10 }, { replayPollMs: 0, poison: { maxAttempts: 2 } });
    await app.dataSource.query('CREATE TABLE printed_labels (message_id varchar(36) NOT NULL)');
    jammed = true;
    const [id] = await app.add('p-2', [{ seq: 0 }]);
    const row = await waitFor('the row published', async () => (await app!.rows()).find((r) => r.id === id && r.status === 'published'));
    // The relay counted the one failed delivery and the set-aside one that published it: far from its maxAttempts (10).
    expect(row.attempts).toBe(2);
    const poison = app.module.get(OutboxInbox).poison!;
    expect(await poison.get('shipping.jammed-printer', id)).toMatchObject({ state: 'set-aside', attempts: 2, reason: 'handler failed: paper jam' });
    expect(runs).toEqual([]);
    jammed = false;
    await poison.replay('shipping.jammed-printer', id);
    expect(runs).toEqual([id]);
    await expect(poison.get('shipping.jammed-printer', id)).rejects.toThrow(/No poison record/);
  });

  it('refuses { inbox: true } when OutboxInboxModule is not imported, naming the handler', async () => {
    await expect(startHandlersApp(isolated.options, [LonelyPrinter])).rejects.toThrow(
      /@OnOutboxEvent\(\) on LonelyPrinter\.print asks for \{ inbox: true \}, but OutboxInboxModule is not imported/,
    );
  });
});
