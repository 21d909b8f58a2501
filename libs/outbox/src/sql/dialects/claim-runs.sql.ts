import { StreamOwnedRows } from './stream-owned-rows.sql';
/**
 * The claim's choice of rows, shared by the dialects: the oldest claimable rows, where a row is
 * taken only with every earlier unpublished row of its aggregate and destination (its "key").
 * A claim therefore carries runs: the first unpublished row of a key and the rows right behind it.
 *
 * Its cost follows the batch, not the backlog, and does not depend on table statistics:
 * Used by PostgreSQL and SQLite in the claim statement itself, and by MariaDB/MySQL as the plain read
 * that picks the rows its claim transaction then locks.
 *
 * - `candidates` walks the pending index in position order and stops after `limit` rows. For
 *   each it looks up its key's first unpublished row (one index probe) and skips the row unless
 *   that head is claimable itself, so a key stuck behind a retrying, leased or dead row does not
 *   fill the batch with rows that cannot go. The lookup is correlated on purpose, never a semi
 *   join: without statistics the planner turned an EXISTS into a join over every pending row. On
 *   PostgreSQL it is a LATERAL join, which the planner can memoize per key;
 * - `gaps` finds, per key of the batch, the first unpublished row of the key that is not among
 *   the candidates: an index walk over the key's candidates plus one entry. Candidates from that
 *   row on are dropped, and so is a key whose head is not a candidate (another relay's claim holds
 *   it locked, so it was skipped). It is computed once per key (materialized), not per row.
 * The earlier form, one NOT EXISTS probe for an earlier unpublished row per pending row, let one
 * row per key through per claim and probed the whole backlog of busy keys (quadratic without
 * fresh statistics).
 */
export interface ClaimRunsSql {
  /** The quoted outbox table. */
  table: string;
  /** The database's current time. */
  now: string;
  /** The statuses that hold back later rows of a key (see the dead-letter policy). */
  holding: string;
  /** The condition that leaves out paused destinations, on `m.destination`. */
  notPaused: string;
  /** The placeholder of the batch size. */
  limit: string;
  /** A locking clause for the candidates (PostgreSQL: FOR UPDATE OF m SKIP LOCKED). */
  lock?: string;
  /** PostgreSQL: the head lookup as a LATERAL join, `gaps` as a MATERIALIZED CTE. */
  postgres?: boolean;
  /**
   * A claim made in the statement that settles the previous batch (PostgreSQL): `step` is the CTE
   * that marks it published (`settled AS (… RETURNING position)`), `attempted` the array of the
   * positions it was asked to mark. Every CTE reads the statement's one snapshot, where those rows
   * are still pending: the rows `settled` returns count as published, so the key's next rows may be
   * claimed; one it could not mark (its lease was taken over) still holds its key back.
   */
  settledFirst?: { step: string; attempted: string };
}

const KEY_COLUMNS = ['aggregate_type', 'aggregate_id', 'transport', 'destination'];

const sameKey = (a: string, b: string) => KEY_COLUMNS.map((column) => `${a}.${column} = ${b}.${column}`).join(' AND ');

const claimable = (row: string, now: string) =>
  `${row}.status = 'pending' AND (${row}.next_attempt_at IS NULL OR ${row}.next_attempt_at <= ${now}) ` +
  `AND (${row}.lease_expires_at IS NULL OR ${row}.lease_expires_at <= ${now})`;

/** `WITH candidates AS (…), gaps AS (…), claimable_runs AS (…)`: the rows to lease are `claimable_runs` (position and key). */
export function claimRunsWith({ table, now, holding, notPaused, limit, lock = '', postgres = false, settledFirst }: ClaimRunsSql): string {
  const keyOf = (row: string) => KEY_COLUMNS.map((column) => `${row}.${column}`).join(', ');
  const notSettledHere = (row: string) => (settledFirst ? ` AND ${row}.position NOT IN (SELECT position FROM settled)` : '');
  const firstUnpublished = (row: string, of: string) => `FROM ${table} ${row} WHERE ${sameKey(row, of)} AND ${row}.status IN (${holding})${notSettledHere(row)}`;
  const headIsClaimable = `SELECT ${claimable('h', now)} AS go ${firstUnpublished('h', 'm')} ORDER BY h.position LIMIT 1`;
  // A row being settled is never a candidate, even with its lease expired: one statement must not change a row twice.
  const notBeingSettled = settledFirst ? ` AND m.position <> ALL(${settledFirst.attempted})` : '';
  return `
    WITH ${settledFirst ? `${settledFirst.step},\n    ` : ''}candidates AS (
      SELECT m.position, ${keyOf('m')}
      FROM ${table} m${postgres ? ` JOIN LATERAL (${headIsClaimable}) head ON head.go` : ''}
      WHERE ${claimable('m', now)}${postgres ? ` AND ${StreamOwnedRows.notStreamOwned('m.')}` : ''}${notBeingSettled}
        AND ${notPaused}${postgres ? '' : `\n        AND (${headIsClaimable})`}
      ORDER BY m.position
      LIMIT ${limit}
      ${lock}),
    gaps AS ${postgres ? 'MATERIALIZED ' : ''}(
      SELECT ${keyOf('k')},
        (SELECT min(f.position) ${firstUnpublished('f', 'k')} AND f.position NOT IN (SELECT position FROM candidates)) AS gap
      FROM (SELECT DISTINCT ${KEY_COLUMNS.join(', ')} FROM candidates) k),
    claimable_runs AS (
      SELECT c.position, ${keyOf('c')} FROM candidates c JOIN gaps k ON ${sameKey('c', 'k')}
      WHERE k.gap IS NULL OR c.position < k.gap)`;
}
