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
});
