import type { EntityManager } from 'typeorm';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { Parcel } from './support/parcel.fixtures';
import { MARIADB_LOCK_WAITS, POSTGRES_LOCK_WAITS, waitForLockWait } from './support/lock-waits';
import { lockBucket } from '../libs/outbox/src/sql/dialects/aggregate-lock-buckets.sql';

/**
 * Two transactions write events of one parcel, one through `OutboxPublisher.add` and one by saving
 * the parcel. The second must wait for the first to commit, so that positions (and so the order the
 * relay publishes in) follow commit order whichever path wrote each event.
 */
describe.each(['postgres', 'mariadb'] as const)('One commit order per aggregate across add and save, on %s', (database) => {
  let harness: OutboxHarness;

  beforeAll(async () => {
    harness = await createOutboxHarness(database);
  });

  afterAll(() => harness?.close());

  const locks = database === 'postgres' ? POSTGRES_LOCK_WAITS : MARIADB_LOCK_WAITS;

  const addEvent = (manager: EntityManager, parcel: Parcel, label: string) =>
    harness.publisher.add(manager, { type: 'parcels.parcel-noted', aggregateType: 'parcel', aggregateId: parcel.id, payload: { label }, topic: 'parcels' });

  const relabel = async (manager: EntityManager, parcel: Parcel, label: string) => {
    const loaded = await manager.findOneByOrFail(Parcel, { id: parcel.id });
    loaded.relabel(label);
    await manager.save(loaded);
  };

  type Writer = (manager: EntityManager, parcel: Parcel) => Promise<unknown>;

  async function inOrder(first: Writer, second: Writer): Promise<string[]> {
    const parcel = Parcel.register('ordered', 10);
    await harness.dataSource.getRepository(Parcel).save(parcel);
    const commits: string[] = [];
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstWrote!: () => void;
    const firstHasWritten = new Promise<void>((resolve) => (firstWrote = resolve));
    const firstDone = harness.dataSource
      .transaction(async (manager) => {
        await first(manager, parcel);
        // On PostgreSQL the outbox's INSERT waits to go out with the next statement (the COMMIT, usually):
        // one sent now makes it run, so that the first writer holds the aggregate's lock while it waits.
        await manager.query('SELECT 1');
        firstWrote();
        await firstMayCommit;
      })
      .then(() => commits.push('first'));
    await firstHasWritten;
    let secondConnection: number | undefined;
    const secondDone = harness.dataSource
      .transaction(async (manager) => {
        secondConnection = await locks.connectionId(manager);
        await second(manager, parcel);
      })
      .then(() => commits.push('second'));
    // The second writer must be blocked by the first one's open transaction.
    await waitForLockWait(locks, 'the second writer to wait for the first one', async () => secondConnection !== undefined && (await locks.isWaiting(harness.dataSource, secondConnection)));
    expect(commits).toEqual([]);
    releaseFirst();
    await Promise.all([firstDone, secondDone]);
    // Both committed. Which promise settles first says nothing of commit order (TypeORM releases the
    // connection after COMMIT, and PostgreSQL lets the second COMMIT return as soon as it is free):
    // the positions below are the proof of order.
    expect([...commits].sort()).toEqual(['first', 'second']);
    if (database === 'mariadb') {
      // The bucket's row lock ended with the transactions: a new one takes it at once.
      const [{ bucket }] = await harness.dataSource.query(
        'SELECT bucket FROM outbox_messages_locks WHERE bucket = ? FOR UPDATE NOWAIT',
        [lockBucket(`parcel\u001f${parcel.id}`)],
      );
      expect(bucket).toBe(lockBucket(`parcel\u001f${parcel.id}`));
    }
    const rows = (await harness.rows()).filter((row) => row.aggregateId === parcel.id && row.eventType !== 'parcels.parcel-registered');
    return rows.map((row) => JSON.parse(row.payload).label);
  }

  it('makes a save wait for an earlier explicit add of the same aggregate', async () => {
    const labels = await inOrder(
      (manager, parcel) => addEvent(manager, parcel, 'added first'),
      (manager, parcel) => relabel(manager, parcel, 'saved second'),
    );
    expect(labels).toEqual(['added first', 'saved second']);
  });

  it('makes an explicit add wait for an earlier save of the same aggregate', async () => {
    const labels = await inOrder(
      (manager, parcel) => relabel(manager, parcel, 'saved first'),
      (manager, parcel) => addEvent(manager, parcel, 'added second'),
    );
    expect(labels).toEqual(['saved first', 'added second']);
  });

  it('makes two explicit adds of one aggregate wait for each other', async () => {
    const labels = await inOrder(
      (manager, parcel) => addEvent(manager, parcel, 'added first'),
      (manager, parcel) => addEvent(manager, parcel, 'added second'),
    );
    expect(labels).toEqual(['added first', 'added second']);
  });
});
