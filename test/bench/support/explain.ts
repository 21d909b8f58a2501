import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createSqlOutboxStore, OUTBOX_DEFAULTS, type SqlStatement } from './outbox';

/**
 * The claim statement exactly as the library's SQL store issues it for a PostgreSQL data source
 * (captured instead of run), with the default batch size and lease.
 */
export async function claimStatement(outboxTable: string): Promise<SqlStatement> {
  const store = createSqlOutboxStore(new DataSource({ type: 'postgres' }), outboxTable);
  let captured: SqlStatement | undefined;
  Reflect.set(store, 'runner', { rows: async (statement: SqlStatement) => ((captured = statement), []) });
  await store.claim({ owner: 'explain', token: 'explain-token', limit: OUTBOX_DEFAULTS.batchSize, leaseMs: OUTBOX_DEFAULTS.leaseMs });
  if (!captured) throw new Error('the store issued no claim statement');
  return captured;
}

/** EXPLAIN (ANALYZE, BUFFERS) of one claim on `admin` (whose search_path holds the table), rolled back; markdown lines. */
export async function explainClaim(admin: Client, outboxTable: string, when: string, withPlan = true): Promise<string[]> {
  const { sql, params } = await claimStatement(outboxTable);
  await admin.query('BEGIN');
  try {
    const plan = (await admin.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params)).rows.map((row) => String(row['QUERY PLAN']));
    const time = plan.filter((line) => /^(Planning|Execution) Time/.test(line)).join(', ');
    if (!withPlan) return [`- ${when}: ${time}`, ''];
    return [`- ${when}: ${time}`, '', '```', ...plan.filter((line) => !/^(Planning|Execution) Time/.test(line)), '```', ''];
  } finally {
    await admin.query('ROLLBACK');
  }
}

/**
 * The user-side workaround measured as a reference in P1 and P5: an index on the ordering key whose
 * predicate is the one the claim's ordering subquery uses (`e.status NOT IN (…)`), so that PostgreSQL
 * can use it. Undefined when the claim statement has no such predicate (nothing to match).
 */
export async function claimOrderIndex(outboxTable: string): Promise<string | undefined> {
  const predicate = /e\.status (NOT IN \([^)]*\))/.exec((await claimStatement(outboxTable)).sql)?.[1];
  if (!predicate) return undefined;
  return `CREATE INDEX "${outboxTable}_claim_order_idx" ON "${outboxTable}" (aggregate_type, aggregate_id, transport, destination, position) WHERE status ${predicate}`;
}
