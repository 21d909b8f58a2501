import { OutboxAdmin } from '@nest-outbox/outbox';
import { waitFor } from '../support/wait-for';
import { OneMessageRefused } from '../support/one-message-refused.transport';
import { noteParcel, parcelRows, walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

// The stream asks the table for backlogs only after a commit that wrote an outbox row (the
// publication carries the table's inserts and updates). A requeue is such a commit: a dead row
// that held nothing (deadLetterPolicy 'skip') becomes pending, and what the aggregate commits
// after it must wait behind it, as in the table mode.
describe('WAL delivery mode: a backlog that appears from a requeue holds the aggregate\'s later messages', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  const transport = new OneMessageRefused('k1');
  const write = (aggregateId: string, label: string) => noteParcel(app, aggregateId, label);
  const rows = (aggregateId: string) => parcelRows(app, aggregateId);

  beforeAll(async () => {
    sandbox = await walSandbox('wal_requeue');
    app = await sandbox.start({
      transport,
      batchSize: 10,
      pollIntervalMs: 100,
      maxAttempts: 1_000,
      deadLetterPolicy: 'skip',
      backoff: { initialMs: 20, maxMs: 50, jitter: 0 },
      wal: { slotName: sandbox.slotName, attemptsBeforeTable: 1 },
    });
  });
  afterAll(() => sandbox?.drop());

  it('streams past a dead row under skip, and holds what follows a requeue of it until it is published', async () => {
    await write('k', 'k1');
    const [dead] = await waitFor('k1 dead in the table', async () => {
      const found = await rows('k');
      return found.length === 1 && found[0].status === 'dead' ? found : undefined;
    });
    await write('k', 'k2');
    await write('other', 'o1');
    await waitFor('k2 and o1 streamed past the dead row', () => transport.labels('k').length === 1 && transport.labels('other').length === 1);
    expect(transport.labels('k')).toEqual(['k2']);
    expect((await rows('k')).map((row) => row.label)).toEqual(['k1']);

    transport.mode = 'retry';
    await app.module.get(OutboxAdmin).requeue(dead.id);
    await write('k', 'k3');
    await write('other', 'o2');
    await waitFor('o2 streamed', () => transport.labels('other').length === 2);
    const held = await waitFor('k3 moved to the table behind the requeued k1', async () => {
      const found = await rows('k');
      return found.length === 2 ? found : undefined;
    });
    expect(held.map((row) => [row.label, row.status])).toEqual([
      ['k1', 'pending'],
      ['k3', 'pending'],
    ]);
    expect(transport.labels('k')).toEqual(['k2']);

    transport.mode = 'accept';
    await waitFor('k1 then k3 published from the table', () => transport.labels('k').length === 3);
    expect(transport.labels('k')).toEqual(['k2', 'k1', 'k3']);
  });
});
