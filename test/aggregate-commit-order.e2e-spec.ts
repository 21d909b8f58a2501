import type { EntityManager } from 'typeorm';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { Parcel } from './support/parcel.fixtures';
import { waitFor } from './support/wait-for';

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

  const connectionId = (manager: EntityManager) =>
    database === 'postgres'
      ? manager.query('SELECT pg_backend_pid() AS id').then((rows: { id: number }[]) => rows[0].id)
      : manager.query('SELECT CONNECTION_ID() AS id').then((rows: { id: number }[]) => rows[0].id);

  /** True while connection `id` waits for a lock (an advisory lock, or a named GET_LOCK). */
  async function isWaiting(id: number): Promise<boolean> {
    if (database === 'postgres') {
      const rows = await harness.dataSource.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [id]);
      return rows.length > 0;
    }
    const rows = await harness.dataSource.query('SELECT STATE AS state FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
    return rows[0]?.state === 'User lock';
  }

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
        firstWrote();
        await firstMayCommit;
      })
      .then(() => commits.push('first'));
    await firstHasWritten;
    let secondConnection: number | undefined;
    const secondDone = harness.dataSource
      .transaction(async (manager) => {
        secondConnection = await connectionId(manager);
        await second(manager, parcel);
      })
      .then(() => commits.push('second'));
    // The second writer must be blocked by the first one's open transaction.
    await waitFor('the second writer to wait for the first one', async () => secondConnection !== undefined && (await isWaiting(secondConnection)), 20_000);
    expect(commits).toEqual([]);
    releaseFirst();
    await Promise.all([firstDone, secondDone]);
    expect(commits).toEqual(['first', 'second']);
    if (database === 'mariadb') {
      // GET_LOCK outlives transactions: it must have been released with them, not left on a pooled connection.
      const [{ holder }] = await harness.dataSource.query(
        `SELECT IS_USED_LOCK(CONCAT('outbox:', SHA1(CONCAT(DATABASE(), '.', 'outbox_messages', ':', ?)))) AS holder`,
        [`parcel\u001f${parcel.id}`],
      );
      expect(holder).toBeNull();
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
