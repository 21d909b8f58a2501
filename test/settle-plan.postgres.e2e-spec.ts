import { randomUUID } from 'node:crypto';
import type { QueryRunner } from 'typeorm';
import { PostgresOutboxDialect } from '../libs/outbox/src/sql/dialects/postgres-outbox.dialect';
import type { SqlStatement } from '../libs/outbox/src/core/sql-connection.port';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';

const HISTORY = 2_000;
const BACKLOG = 3_000;
const BATCH = 100;

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows a plan read from the outbox table: those its scans returned and those they filtered out. */
function outboxRowsRead(node: PlanNode): number {
  const own = node['Relation Name'] === 'outbox_messages' && node.Plans === undefined ? node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0) : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + outboxRowsRead(child), 0);
}

/**
 * PostgreSQL: the statements that settle, fail and give back a claimed batch find its rows by
 * position, whatever the table's statistics say. Statistics taken while every row was published
 * (any ANALYZE at a quiet time: the usual state of an outbox) once made the planner walk a partial
 * index on status instead, reading the whole backlog for each batch of a burst.
 */
describe('the settle of a batch after statistics of an all-published table (PostgreSQL)', () => {
  let harness: OutboxHarness;
  let runner: QueryRunner;
  const dialect = new PostgresOutboxDialect('outbox_messages');

  beforeEach(async () => {
    harness = await createOutboxHarness('postgres', { relay: false });
    runner = harness.dataSource.createQueryRunner();
  });

  afterEach(async () => {
    await runner?.release();
    await harness?.close();
  });

  const add = (count: number) =>
    harness.add(Array.from({ length: count }, (_, n) => ({ type: 'order.noted', aggregateType: 'order', aggregateId: `O-${n % 50}`, payload: { n }, topic: 'orders' })));

  /** The statement's plan as run (in a transaction rolled back, so each statement sees the same batch). */
  const explain = async (statement: SqlStatement) => {
    await runner.startTransaction();
    try {
      const [{ 'QUERY PLAN': plan }] = await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, statement.params);
      return plan[0].Plan as PlanNode;
    } finally {
      await runner.rollbackTransaction();
    }
  };

  it('reads the batch’s rows, not the backlog, to settle, fail or give back a batch', async () => {
    await add(HISTORY);
    await harness.dataSource.query(`UPDATE outbox_messages SET status = 'published', published_at = now()`);
    await harness.dataSource.query('VACUUM ANALYZE outbox_messages');
    await add(BACKLOG);

    const token = randomUUID();
    const claim = dialect.claim('settle-plan', token, BATCH, 60_000);
    // TypeORM answers an UPDATE … RETURNING with [rows, count].
    const [claimed]: [Array<{ position: string }>, number] = await harness.dataSource.query(claim.sql, claim.params);
    expect(claimed).toHaveLength(BATCH);
    const positions = claimed.map((row) => String(row.position));

    const statements: Record<string, SqlStatement> = {
      settle: dialect.markPublished(token, positions),
      'settle, deleting': new PostgresOutboxDialect('outbox_messages', { deleteOnPublish: true }).markPublished(token, positions),
      fail: dialect.markFailed(token, positions.map((position) => ({ position, error: 'broker away', retryInMs: 1_000 }))),
      'give back': dialect.giveBack(token, positions),
    };
    const changed: Record<string, number> = {};
    const readPastTwiceTheBatch: Record<string, number> = {};
    for (const [name, statement] of Object.entries(statements)) {
      const plan = await explain(statement);
      changed[name] = plan['Actual Rows'];
      const read = outboxRowsRead(plan);
      if (read > 2 * BATCH) readPastTwiceTheBatch[name] = read;
    }
    // Each statement changes every row of the batch (RETURNING position) …
    expect(changed).toEqual(Object.fromEntries(Object.keys(statements).map((name) => [name, BATCH])));
    // … and reads about as many: a walk of a partial index read the 3,000 rows pending.
    expect(readPastTwiceTheBatch).toEqual({});
  });
});
