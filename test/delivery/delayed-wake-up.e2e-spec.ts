import { Injectable } from '@nestjs/common';
import { OnOutboxEvent, OutboxPublisher, type OutboxEnvelope } from '@nest-outbox/outbox';
import { startHandlersApp } from '../in-process/in-process.harness';
import { isolatedDatabase, type TestDatabase } from '../support/outbox-harness';
import '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';

const DELAY_MS = 1_500;
const handled: Array<{ id: string; at: number }> = [];

@Injectable()
class Reminders {
  @OnOutboxEvent('parcels.parcel-registered', { name: 'reminders.send' })
  send(envelope: OutboxEnvelope): void {
    handled.push({ id: envelope.id, at: Date.now() });
  }
}

describe.each<TestDatabase>(['postgres', 'sqlite'])('delayed rows wake the relay when they come due on %s', (database) => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let app: Awaited<ReturnType<typeof startHandlersApp>> | undefined;

  beforeEach(async () => {
    handled.length = 0;
    isolated = await isolatedDatabase(database);
  });
  afterEach(async () => {
    await app?.close();
    await isolated.drop();
  });

  it('runs a delayed message at its time, long before the next poll', async () => {
    // A poll far beyond the test's deadline: only the wake-up for the delayed row can run it in time.
    app = await startHandlersApp(isolated.options, [Reminders], { pollIntervalMs: 120_000 });
    const started = Date.now();
    const [id] = await app.dataSource.transaction((manager) =>
      app!.module.get(OutboxPublisher).add(manager, { type: 'parcels.parcel-registered', aggregateType: 'parcel', aggregateId: 'p-9', payload: {}, delayMs: DELAY_MS }),
    );
    const done = await waitFor('the delayed message handled', () => handled.find((entry) => entry.id === id), DELAY_MS + 15_000);
    expect(done.at - started).toBeGreaterThanOrEqual(DELAY_MS - 50);
  });
});
