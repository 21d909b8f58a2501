import { OutboxTable } from '../libs/outbox/src/sql/dialects/outbox-table';
import { PlannerStatistics } from '../libs/outbox/src/sql/planner-statistics';
import { PooledSqlRunner } from '../libs/outbox/src/typeorm/sql-runners';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { RecordingTransport } from './support/recording.transport';
import { waitFor } from './support/wait-for';

/**
 * PostgreSQL: the relay refreshes the outbox table's planner statistics before its first claim and
 * while a burst drains, so that claims keep walking the pending rows in order rather than reading
 * the whole backlog (see PlannerStatistics; P8 and P9 in BENCHMARKS.md measure the claim).
 */
describe('planner statistics of the outbox table (PostgreSQL)', () => {
  let harness: OutboxHarness;

  beforeEach(async () => {
    harness = await createOutboxHarness('postgres', { relay: false });
  });

  afterEach(async () => {
    await harness?.close();
  });

  const statistics = async () => {
    const [row] = await harness.dataSource.query(
      `SELECT c.reltuples::float8 AS "rows", c.relpages AS "pages" FROM pg_class c WHERE c.oid = 'outbox_messages'::regclass`,
    );
    return row as { rows: number; pages: number };
  };

  it('analyzes a table that never had statistics before the first claim of a relay started on its backlog', async () => {
    await harness.add(Array.from({ length: 1_500 }, (_, n) => ({ type: 'burst.noted', aggregateType: 'account', aggregateId: `A-${n % 10}`, payload: { n }, topic: 'burst' })));
    // A new table has no statistics: PostgreSQL reads reltuples −1 as "never analyzed".
    expect((await statistics()).rows).toBe(-1);

    const transport = new RecordingTransport();
    const relay = harness.relay('statistics-relay', transport, { batchSize: 100 });
    expect((await relay.publishBatch()).claimed).toBe(100);
    // No waiting: the first claim ran only once ANALYZE had counted the backlog.
    expect((await statistics()).rows).toBeGreaterThanOrEqual(1_000);
  });

  it('analyzes a table whose statistics were taken while it was empty while it drains a burst on one key that grew the table', async () => {
    await harness.dataSource.query('ANALYZE outbox_messages');
    expect((await statistics()).rows).toBe(0);
    const transport = new RecordingTransport();
    const relay = harness.relay('statistics-relay', transport, { batchSize: 100 });
    // The relay's first look finds statistics that fit the (empty) table.
    expect((await relay.publishBatch()).claimed).toBe(0);
    expect((await statistics()).rows).toBe(0);

    await harness.add(Array.from({ length: 1_500 }, (_, n) => ({ type: 'burst.noted', aggregateType: 'account', aggregateId: 'A-1', payload: { n }, topic: 'burst' })));
    while ((await relay.publishBatch()).claimed > 0);
    expect(transport.delivered).toHaveLength(1_500);

    // ANALYZE runs beside the relay, not in its claim: wait for its result.
    const analyzed = await waitFor('the relay to analyze the table', async () => {
      const now = await statistics();
      return now.rows > 0 ? now : undefined;
    });
    expect(analyzed.rows).toBeGreaterThanOrEqual(1_000);
  });

  it('analyzes, after a slow claim, a table whose statistics count no pending rows while a burst far smaller than a fifth of it is pending', async () => {
    const add = (count: number) =>
      harness.add(Array.from({ length: count }, (_, n) => ({ type: 'order.noted', aggregateType: 'order', aggregateId: `O-${n % 50}`, payload: { n }, topic: 'orders' })));
    // A kept history of published rows, analyzed while nothing was pending (a quiet time) …
    await add(10_000);
    await harness.dataSource.query(`UPDATE outbox_messages SET status = 'published', published_at = now()`);
    // PostgreSQL 15 reports a session's changes to the statistics up to a second after its transaction:
    // an ANALYZE before the update's are in would leave them to count as changes since it (a busy server).
    await waitFor("the update's changes counted", async () => {
      const [row] = await harness.dataSource.query(`SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relid = 'outbox_messages'::regclass`);
      return Number(row?.n ?? 0) >= 20_000;
    });
    await harness.dataSource.query('ANALYZE outbox_messages');
    const pendingCounted = async () => {
      const [row] = await harness.dataSource.query(
        `SELECT coalesce((SELECT m.freq FROM pg_stats st CROSS JOIN LATERAL unnest(st.most_common_vals::text::text[], st.most_common_freqs) AS m(value, freq)
           WHERE st.tablename = 'outbox_messages' AND st.schemaname = current_schema() AND st.attname = 'status' AND m.value = 'pending'), 0) * c.reltuples AS pending
         FROM pg_class c WHERE c.oid = 'outbox_messages'::regclass`,
      );
      return Number(row.pending);
    };
    expect(await pendingCounted()).toBe(0);
    // … then a burst of 2,000: fewer changes than 1,000 + a fifth of the table's rows.
    await add(2_000);
    const statistics = new PlannerStatistics(new PooledSqlRunner(harness.dataSource), OutboxTable.on('postgres', 'outbox_messages'));
    expect(await statistics.refreshIfStale()).toBe(false);

    expect(await statistics.refreshIfStale({ afterSlowClaim: true })).toBe(true);
    expect(await pendingCounted()).toBeGreaterThan(1_000);
    // Statistics that know the backlog are left alone after the next slow claim.
    expect(await statistics.refreshIfStale({ afterSlowClaim: true })).toBe(false);
  });
});
