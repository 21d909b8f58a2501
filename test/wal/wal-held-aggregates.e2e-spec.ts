import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
// Watched (not replaced) to count the stream's reads of the table.
import { TableOverflow } from '../../libs/outbox/src/wal/table-overflow';
import { waitFor } from '../support/wait-for';
import { OneMessageRefused } from '../support/one-message-refused.transport';
import { noteParcel, parcelRows, walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

// The stream keeps the aggregates the table holds in memory (HeldAggregates). Under 'hold' (the
// default) a dead row holds its aggregate for as long as it stays: what the aggregate commits after
// it goes to the table behind it, other aggregates stream; a requeue from any instance's console is a commit
// that writes the table, after which the held rows drain in order and the aggregate streams again.
describe('WAL delivery mode: a dead row holds its aggregate, and a requeue from another instance\'s console lets it drain and stream again', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  let base: string;
  const transport = new OneMessageRefused('a1');
  const write = (aggregateId: string, label: string) => noteParcel(app, aggregateId, label);
  const rows = (aggregateId: string) => parcelRows(app, aggregateId);

  beforeAll(async () => {
    sandbox = await walSandbox('wal_held');
    app = await sandbox.start({
      transport,
      batchSize: 10,
      pollIntervalMs: 100,
      maxAttempts: 1_000,
      backoff: { initialMs: 20, maxMs: 50, jitter: 0 },
      wal: { slotName: sandbox.slotName, attemptsBeforeTable: 1 },
    });
    // The operator's console runs on another instance (relay off): its requeue reaches the
    // streaming instance only through the database, as a commit in the slot.
    const operator = await sandbox.start(
      { transport, relay: false, wal: { slotName: sandbox.slotName } },
      { imports: [OutboxConsoleModule.forRoot({ noAuth: true, refreshIntervalMs: 1_000 })], http: true },
    );
    base = `${await operator.http!.getUrl()}/outbox/api/`;
  });
  afterAll(() => sandbox?.drop());

  it('holds A behind its dead row while B streams, drains A in order after a console requeue, then streams A directly', async () => {
    await write('a', 'a1');
    const [dead] = await waitFor('a1 dead in the table', async () => {
      const found = await rows('a');
      return found.length === 1 && found[0].status === 'dead' ? found : undefined;
    });

    await write('a', 'a2');
    await write('b', 'b1');
    await write('a', 'a3');
    await write('b', 'b2');
    await waitFor('b1 and b2 streamed past the held aggregate', () => transport.labels('b').length === 2);
    const held = await waitFor('a2 and a3 moved to the table behind the dead a1', async () => {
      const found = await rows('a');
      return found.length === 3 ? found : undefined;
    });
    expect(held.map((row) => [row.label, row.status])).toEqual([
      ['a1', 'dead'],
      ['a2', 'pending'],
      ['a3', 'pending'],
    ]);
    expect(transport.labels('a')).toEqual([]);
    expect(transport.labels('b')).toEqual(['b1', 'b2']);
    // B streamed: no row of it stays (wal.write 'row': the stream deletes its rows once acknowledged).
    await waitFor("B's rows gone", async () => (await rows('b')).length === 0);

    // The dead row stays, and the stream checks B's batches against the set in memory: one commit a
    // batch here, and at most a read or two of the table after the moves above (a query a batch before).
    const backlogged = jest.spyOn(TableOverflow.prototype, 'backlogged');
    const heldSet = jest.spyOn(TableOverflow.prototype, 'held');
    try {
      for (let n = 3; n <= 22; n++) {
        await write('b', `b${n}`);
        await waitFor(`b${n} streamed`, () => transport.labels('b').length === n);
      }
      expect(backlogged.mock.calls.length + heldSet.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      backlogged.mockRestore();
      heldSet.mockRestore();
    }

    // The requeue commits a pending row; while a1 keeps failing, a4 still waits behind it.
    transport.mode = 'retry';
    const response = await fetch(`${base}messages/${dead.id}/requeue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBeLessThan(300);
    await write('b', 'b23');
    await write('a', 'a4');
    await waitFor('b23 streamed', () => transport.labels('b').length === 23);
    await waitFor('a4 moved to the table behind the requeued a1', async () => (await rows('a')).length === 4);
    expect(transport.labels('a')).toEqual([]);

    transport.mode = 'accept';
    await waitFor('a1 to a4 published from the table', () => transport.labels('a').length === 4);
    expect(transport.labels('a')).toEqual(['a1', 'a2', 'a3', 'a4']);
    await waitFor('the table drained', async () => (await rows('a')).every((row) => row.status === 'published'));

    // Drained: the stream's next batch with 'a' asks the table, finds nothing, and publishes directly.
    await write('a', 'a5');
    await write('b', 'b24');
    await waitFor('a5 and b24 streamed', () => transport.labels('a').length === 5 && transport.labels('b').length === 24);
    expect(transport.labels('a')).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect((await rows('a')).map((row) => row.label)).toEqual(['a1', 'a2', 'a3', 'a4']);
  });
});
