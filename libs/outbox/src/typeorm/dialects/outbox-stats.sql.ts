import type { SqlStatement } from './outbox-sql.dialect';

/**
 * The stats statement of each database family. One statement reads every destination: the
 * unpublished rows through the partial index the claim uses, and the rows published in the last
 * hour through the published_at index, so its cost follows the backlog and the last hour's
 * traffic, never the table's history. Ages come back as milliseconds measured by the database.
 */
export type StatsDialect = 'postgres' | 'sqlite' | 'mariadb';

interface Clock {
  /** The current time, in the type of the timestamp columns. */
  now: string;
  /** `now` minus a constant number of seconds. */
  ago: (seconds: number) => string;
  /** Milliseconds from a timestamp expression to now, as a number. */
  msSince: (expression: string) => string;
}

const CLOCKS: Record<StatsDialect, Clock> = {
  postgres: {
    now: 'now()',
    ago: (seconds) => `now() - interval '${seconds} seconds'`,
    msSince: (expression) => `EXTRACT(EPOCH FROM now() - ${expression}) * 1000`,
  },
  // Times are UTC text 'YYYY-MM-DD HH:MM:SS.SSS', which compares correctly as text.
  sqlite: {
    now: `strftime('%Y-%m-%d %H:%M:%f', 'now')`,
    ago: (seconds) => `strftime('%Y-%m-%d %H:%M:%f', 'now', '-${seconds} seconds')`,
    msSince: (expression) => `(julianday('now') - julianday(${expression})) * 86400000.0`,
  },
  mariadb: {
    now: 'NOW(3)',
    ago: (seconds) => `NOW(3) - INTERVAL ${seconds} SECOND`,
    msSince: (expression) => `TIMESTAMPDIFF(MICROSECOND, ${expression}, NOW(3)) / 1000`,
  },
};

export function statsStatement(dialect: StatsDialect, table: string): SqlStatement {
  const { now, ago, msSince } = CLOCKS[dialect];
  const q = (name: string) => (dialect === 'mariadb' ? name : `"${name}"`);
  const t = dialect === 'mariadb' ? `\`${table}\`` : `"${table}"`;
  const columns = 'transport, destination, status, created_at, lease_expires_at, next_attempt_at, published_at';
  const count = (condition: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
  const leased = `lease_expires_at IS NOT NULL AND lease_expires_at > ${now}`;
  return {
    sql: `
      SELECT transport AS ${q('transport')}, destination AS ${q('destination')},
        ${count(`status = 'pending'`)} AS ${q('pending')},
        ${count(`status = 'pending' AND ${leased}`)} AS ${q('inFlight')},
        ${count(`status = 'pending' AND NOT (${leased}) AND next_attempt_at IS NOT NULL AND next_attempt_at > ${now}`)} AS ${q('retrying')},
        ${count(`status = 'dead'`)} AS ${q('dead')},
        ${count(`status = 'published' AND published_at > ${ago(60)}`)} AS ${q('publishedLastMinute')},
        ${count(`status = 'published'`)} AS ${q('publishedLastHour')},
        ${msSince(`MIN(CASE WHEN status = 'pending' THEN created_at END)`)} AS ${q('oldestPendingAgeMs')},
        ${msSince('MAX(published_at)')} AS ${q('lastPublishedAgoMs')}
      FROM (
        SELECT ${columns} FROM ${t} WHERE status IN ('pending', 'dead')
        UNION ALL
        SELECT ${columns} FROM ${t} WHERE status = 'published' AND published_at > ${ago(3600)}
      ) recent
      GROUP BY transport, destination`,
    params: [],
  };
}
