import { Client } from 'pg';
import { waitFor } from '../support/wait-for';
import { startWalChild, type WalChild } from '../support/wal-instance.process';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/**
 * `wal.readerThread: 'worker'`: the slot read and decoded on a worker thread of the app, the
 * commits published on its main one. The app runs in a child process (a real worker thread starts
 * there from the library's source, compiled as it loads), so that it can also be SIGKILLed.
 */
describe.each(['row', 'message'] as const)("WAL delivery mode, the reader on a worker thread (wal.write '%s')", (write) => {
  let sandbox: WalSandbox;
  let writer: WalApp;
  let admin: Client;
  const children: WalChild[] = [];
  let seq = 0;

  beforeAll(async () => {
    sandbox = await walSandbox(`wal_reader_thread_${write}`);
    // The tables and the slot first, by an instance that does not relay; it writes every event below.
    writer = await sandbox.start({ relay: false, wal: { write } });
    admin = new Client({ connectionString: sandbox.url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await writer?.close();
    await admin?.end();
    await sandbox?.drop();
  });

  const startReader = async (): Promise<WalChild> => {
    const child = startWalChild(sandbox, { write, readerThread: 'worker' });
    children.push(child);
    await child.ready;
    return child;
  };

  /** `count` events over five aggregates, in transactions of one to seven events each. */
  const writeEvents = async (count: number): Promise<string[]> => {
    const ids: string[] = [];
    while (ids.length < count) {
      const inThis = Math.min(count - ids.length, 1 + (ids.length % 7));
      ids.push(
        ...(await writer.dataSource.transaction(async (manager) => {
          const written: string[] = [];
          for (let n = 0; n < inThis; n++, seq++) {
            written.push(...(await writer.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: `p${seq % 5}`, payload: { seq }, topic: 'parcels' })));
          }
          return written;
        })),
      );
    }
    return ids;
  };

  const slotPast = async (lsn: string): Promise<boolean> =>
    (await admin.query(`SELECT confirmed_flush_lsn >= $2::pg_lsn AS past FROM pg_replication_slots WHERE slot_name = $1`, [sandbox.slotName, lsn])).rows[0]?.past === true;
  const currentLsn = async (): Promise<string> => (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn as string;

  const inOrderPerAggregate = (published: WalChild['published']) => {
    for (const key of ['p0', 'p1', 'p2', 'p3', 'p4']) {
      const order = published.filter((m) => m.key === key).map((m) => m.seq);
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  };

  it('publishes every event once, in each aggregate’s order, confirms the slot past them and past WAL without events, and closes', async () => {
    const reader = await startReader();
    await waitFor('the instance starting its reader’s worker thread', () => reader.workers.length === 1);

    const ids = await writeEvents(200);
    await waitFor('every event published', () => ids.every((id) => reader.published.some((m) => m.id === id)));
    expect(reader.published.map((m) => m.id).sort()).toEqual([...ids].sort());
    inOrderPerAggregate(reader.published);

    // Confirmed through the worker thread: past the events, then past WAL that holds none (a keepalive's position).
    await admin.query(`CREATE TABLE ${sandbox.schema}.unrelated_${write} (n integer)`);
    await admin.query(`INSERT INTO ${sandbox.schema}.unrelated_${write} SELECT generate_series(1, 20)`);
    const afterUnrelated = await currentLsn();
    await waitFor('the slot confirmed past WAL with no outbox event', () => slotPast(afterUnrelated));

    await expect(reader.close()).resolves.toBe(0);
  });

  it('loses nothing when the instance is SIGKILLed mid-stream: the next one, on a worker thread too, publishes the rest in order', async () => {
    const first = await startReader();
    const writing = writeEvents(300);
    await waitFor('the first instance publishing some of them', () => first.published.length >= 20);
    await first.kill();
    const ids = await writing;
    const more = await writeEvents(50);

    const second = await startReader();
    const all = [...ids, ...more];
    const seen = () => new Set([...first.published.map((m) => m.id), ...second.published.map((m) => m.id)]);
    await waitFor('every event published by one instance or the other', () => all.every((id) => seen().has(id)));
    expect(second.workers).toHaveLength(1);
    // Again only what the first had not confirmed; the second publishes each once, in order.
    expect(new Set(second.published.map((m) => m.id)).size).toBe(second.published.length);
    inOrderPerAggregate(second.published);
    const lastCommit = await currentLsn();
    await waitFor('the slot confirmed past the last event', () => slotPast(lastCommit));
    await expect(second.close()).resolves.toBe(0);
  });
});
