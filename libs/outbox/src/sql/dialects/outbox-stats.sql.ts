import type { SqlStatement } from '../../core/sql-connection.port';
import { dueSince } from './due-time.sql';
import type { OutboxTable } from './outbox-table';

/**
 * The stats statement of each database family, one statement per refresh. It reads the
 * unpublished rows through the partial index the claim uses, and only the rows published since
 * the start of the previous minute through the published_at index, counted per minute: the
 * caller keeps the minutes of the last hour and reads each row about twice, so the cost follows
 * the backlog and the last two minutes of traffic, never the hour's or the table's history.
 * Ages come back as milliseconds and minutes as minute numbers, both by the database's clock.
 */
export type StatsDialect = 'postgres' | 'sqlite' | 'mariadb';

interface Clock {
  /** The current time, in the type of the timestamp columns. */
  now: string;
  /** `now` minus a constant number of seconds. */
  ago: (seconds: number) => string;
  /** The start of minute number `param` (minutes since the Unix epoch). */
  minuteStart: (param: string) => string;
  /** The minute number of a timestamp expression. */
  minuteOf: (expression: string) => string;
  /** Milliseconds from a timestamp expression to now, as a number. */
  msSince: (expression: string) => string;
  param: (index: number) => string;
}

const CLOCKS: Record<StatsDialect, Clock> = {
  postgres: {
    now: 'now()',
    ago: (seconds) => `now() - interval '${seconds} seconds'`,
    minuteStart: (param) => `to_timestamp(${param}::bigint * 60)`,
    minuteOf: (expression) => `floor(extract(epoch from ${expression}) / 60)`,
    msSince: (expression) => `EXTRACT(EPOCH FROM now() - ${expression}) * 1000`,
    param: (index) => `$${index}`,
  },
  // Times are UTC text 'YYYY-MM-DD HH:MM:SS.SSS', which compares correctly as text.
  sqlite: {
    now: `strftime('%Y-%m-%d %H:%M:%f', 'now')`,
    ago: (seconds) => `strftime('%Y-%m-%d %H:%M:%f', 'now', '-${seconds} seconds')`,
    minuteStart: (param) => `strftime('%Y-%m-%d %H:%M:%f', ${param} * 60, 'unixepoch')`,
    minuteOf: (expression) => `(CAST(strftime('%s', ${expression}) AS INTEGER) / 60)`,
    msSince: (expression) => `(julianday('now') - julianday(${expression})) * 86400000.0`,
    param: () => '?',
  },
  // UNIX_TIMESTAMP and FROM_UNIXTIME read and write DATETIME in the session's time zone, as NOW(3) does.
  mariadb: {
    now: 'NOW(3)',
    ago: (seconds) => `NOW(3) - INTERVAL ${seconds} SECOND`,
    minuteStart: (param) => `FROM_UNIXTIME(${param} * 60)`,
    minuteOf: (expression) => `FLOOR(UNIX_TIMESTAMP(${expression}) / 60)`,
    msSince: (expression) => `TIMESTAMPDIFF(MICROSECOND, ${expression}, NOW(3)) / 1000`,
    param: () => '?',
  },
};

/**
 * Rows of three kinds: `backlog` (per destination: pending, in flight, retrying, dead, lag),
 * `published` (per destination and minute since `sinceMinute`, or over the last hour when it is
 * `null`: count, count in the last 60 s, ms since the newest) and one `clock` row (the current
 * minute number), in the aliases of {@link StatsRow}.
 */
export function statsStatement(dialect: StatsDialect, table: OutboxTable, sinceMinute: number | null, streamed = false): SqlStatement {
  const { now, ago, minuteStart, minuteOf, msSince, param } = CLOCKS[dialect];
  const q = (name: string) => (dialect === 'mariadb' ? name : `"${name}"`);
  const t = table.quoted(dialect);
  const count = (condition: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
  const leased = `lease_expires_at IS NOT NULL AND lease_expires_at > ${now}`;
  const since = sinceMinute === null ? ago(3600) : minuteStart(param(1));
  const none = (name: string) => `NULL AS ${q(name)}`;
  // Retrying: failed at least once and waiting in backoff, as the console's filter; a row delayed at writing has not failed.
  // The lag counts from when a row became due (its creation, the end of its delay, its requeue); a row not due yet is not late.
  const due = dueSince(now);
  return {
    sql: `
      SELECT 'backlog' AS ${q('kind')}, transport AS ${q('transport')}, destination AS ${q('destination')}, ${none('minute')},
        ${count(`status = 'pending'`)} AS ${q('pending')},
        ${count(`status = 'pending' AND ${leased}`)} AS ${q('inFlight')},
        ${count(`status = 'pending' AND attempts > 0 AND NOT (${leased}) AND next_attempt_at IS NOT NULL AND next_attempt_at > ${now}`)} AS ${q('retrying')},
        ${count(`status = 'dead'`)} AS ${q('dead')},
        ${msSince(`MIN(CASE WHEN status = 'pending' AND ${due} <= ${now} THEN ${due} END)`)} AS ${q('oldestPendingAgeMs')},
        ${none('published')}, ${none('publishedLastMinute')}, ${none('lastPublishedAgoMs')}
      FROM ${t} WHERE status IN ('pending', 'dead')
      GROUP BY transport, destination
      UNION ALL
      SELECT 'published', transport, destination, ${minuteOf('published_at')}, 0, 0, 0, 0, NULL,
        COUNT(*), ${count(`published_at > ${ago(60)}`)}, ${msSince('MAX(published_at)')}
      FROM ${t} WHERE status = 'published' AND published_at >= ${since}
      GROUP BY transport, destination, ${minuteOf('published_at')}${streamed && dialect === 'postgres' ? streamedMinutes(table, since) : ''}
      UNION ALL
      SELECT 'clock', NULL, NULL, ${minuteOf(now)}, 0, 0, 0, 0, NULL, 0, 0, NULL`,
    params: sinceMinute === null ? [] : [sinceMinute],
  };
}

/**
 * PostgreSQL, where the WAL mode ran: what the stream published, counted per minute in
 * `<table>_wal_published` (see StreamedCounts), as more `published` rows. "In the last 60 s" is the
 * current minute's count there: the stream keeps minutes, not messages.
 */
function streamedMinutes(table: OutboxTable, since: string): string {
  const { minuteOf, msSince } = CLOCKS.postgres;
  return `
      UNION ALL
      SELECT 'published', transport, destination, ${minuteOf('minute')}, 0, 0, 0, 0, NULL,
        SUM(published), SUM(CASE WHEN minute > now() - interval '60 seconds' THEN published ELSE 0 END), ${msSince('MAX(last_published_at)')}
      FROM ${table.walPublished.quoted()} WHERE minute >= date_trunc('minute', ${since})
      GROUP BY transport, destination, ${minuteOf('minute')}`;
}
