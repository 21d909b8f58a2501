import type { OutboxPartitioning } from '@nest-outbox/outbox/core';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { RecordingTransport } from './support/recording.transport';
import { waitFor } from './support/wait-for';

const ROWS = 600;

/**
 * PostgreSQL: the library's DDL leaves half of each page free (`fillfactor = 50`), so that a
 * claim's lease, which sets only columns no index holds, writes the row's new version on its own
 * page as a HOT update — no entry in any of the table's four indexes. With full pages nearly every
 * lease was a plain update (BENCHMARKS.md, "Half-empty pages"). Plain and partitioned tables.
 */
describe.each([
  ['a plain table', undefined],
  ['a partitioned table', { interval: 'day' } as OutboxPartitioning],
])('the outbox table’s pages (PostgreSQL, %s)', (_name, partitioning) => {
  let harness: OutboxHarness;

  beforeEach(async () => {
    harness = await createOutboxHarness('postgres', { relay: false, ...(partitioning && { partitioning }) });
  });

  afterEach(async () => {
    await harness?.close();
  });

  // The table and, when partitioned, its partitions (the parent holds no rows of its own).
  const tablesSql = `SELECT c.oid FROM pg_class c WHERE c.oid = 'outbox_messages'::regclass
    UNION SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = 'outbox_messages'::regclass`;

  it('is made with fillfactor 50, and nearly every claim’s lease is a HOT update', async () => {
    const options = await harness.dataSource.query(`SELECT c.relkind::text AS kind, c.reloptions FROM pg_class c WHERE c.oid IN (${tablesSql})`);
    const withPages = (options as Array<{ kind: string; reloptions: string[] | null }>).filter((table) => table.kind === 'r');
    expect(withPages.length).toBeGreaterThan(0);
    for (const table of withPages) expect(table.reloptions).toEqual(['fillfactor=50']);

    await harness.add(Array.from({ length: ROWS }, (_, n) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId: `P-${n % 40}`, payload: { n, note: 'x'.repeat(300) }, topic: 'parcels' })));
    const transport = new RecordingTransport();
    const relay = harness.relay('storage-relay', transport, { batchSize: 100 });
    while ((await relay.publishBatch()).claimed > 0);
    expect(transport.delivered).toHaveLength(ROWS);

    // Each row was updated twice: leased (no indexed column), then published (its status is in
    // the partial indexes' predicates, never HOT). Statistics reach the view within a second or so.
    // A settle's new version may take the room a later lease of the same page needed, so not every
    // lease is HOT (592 of 600 in one CI run); on full pages 31 of the 1,200 updates were.
    const updates = await waitFor('the updates counted in pg_stat_user_tables', async () => {
      const [row] = await harness.dataSource.query(
        `SELECT sum(n_tup_upd)::int AS updated, sum(n_tup_hot_upd)::int AS hot FROM pg_stat_user_tables WHERE relid IN (${tablesSql})`,
      );
      return row.updated >= 2 * ROWS ? (row as { updated: number; hot: number }) : undefined;
    });
    expect(updates.hot).toBeGreaterThanOrEqual(ROWS * 0.8);
  });
});
