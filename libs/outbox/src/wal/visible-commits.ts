import type { SqlConnection, SqlStatement } from '../core/sql-connection.port';
import { walCommitNotVisible } from '../core/stream/stream.messages';

// How long a statement on rows the stream decoded is run again until it sees their commits: a few ms at most, normally.
const VISIBILITY_RETRY_MS = 1;
const VISIBILITY_TIMEOUT_MS = 5_000;

/**
 * Whether the statement's snapshot (`pg_current_snapshot()`, PostgreSQL 13+) sees every decoded
 * transaction of $3. The stream decodes 32-bit ids; each is widened to the 64-bit id nearest the
 * snapshot's xmax (same epoch, or the one before or after when it lies more than 2^31 away): a
 * decoded commit is recent, and may even be at or past xmax while it is not yet visible.
 * (`snapshot`: another snapshot expression, for tests of the widening across epochs.)
 */
export function visibleInSnapshot(xids: string, snapshot = 'pg_current_snapshot()'): string {
  return `(SELECT coalesce(bool_and(pg_visible_in_snapshot((CASE
      WHEN w.c > w.xmax + 2147483648 AND w.c >= 4294967296 THEN w.c - 4294967296
      WHEN w.c < w.xmax - 2147483648 THEN w.c + 4294967296
      ELSE w.c END)::text::xid8, w.snap)), true)
    FROM (SELECT s.snap, x.xmax, trunc(x.xmax / 4294967296) * 4294967296 + u.xid AS c
      FROM (SELECT ${snapshot} AS snap) AS s
      CROSS JOIN LATERAL (SELECT pg_snapshot_xmax(s.snap)::text::numeric AS xmax) AS x
      CROSS JOIN unnest(${xids}::bigint[]) AS u(xid)) AS w)`;
}

/**
 * Runs a statement on rows the stream decoded (its one result row says `visible`: whether its
 * snapshot saw every inserting transaction) until it does, for at most 5 s; then fails, and the
 * caller tries again later. The statement must be one that may run twice (a delete, a release).
 */
export async function runUntilVisible(connection: SqlConnection, statement: SqlStatement, xids: readonly number[]): Promise<Record<string, unknown>> {
  const deadline = Date.now() + VISIBILITY_TIMEOUT_MS;
  for (;;) {
    const [row] = (await connection.run(statement)).records;
    if (row?.visible === true || row?.visible === 't') return row;
    if (Date.now() > deadline) throw new Error(walCommitNotVisible(xids, VISIBILITY_TIMEOUT_MS));
    await new Promise((resolve) => setTimeout(resolve, VISIBILITY_RETRY_MS));
  }
}
