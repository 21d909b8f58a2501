import { OutboxConfigurationError } from '../../core/outbox.errors';
import { unsupportedDatabase } from '../../core/outbox.messages';
import type { PoisonFailure } from '../../core/poison/poison.port';
import { DEFAULT_INBOX_TABLE } from '../inbox/inbox-sql.dialect';

export const DEFAULT_POISON_TABLE = 'outbox_inbox_poison';

export interface PoisonStatement {
  sql: string;
  params: unknown[];
}

/** The poison table's SQL for one database family. Every read returns the columns of `PoisonRecord`, times as ISO-8601 UTC text. */
export interface PoisonSqlDialect {
  /** Inserts the record with one attempt, or adds one; sets it aside at `setAsideAt` attempts. Returns the row where the database can. */
  countFailure(failure: PoisonFailure, setAsideAt: number): PoisonStatement;
  /** True when `countFailure` returns no row (MariaDB): read it with `get`. */
  readonly readAfterCount: boolean;
  get(consumer: string, key: string): PoisonStatement;
  list(consumer: string | null, state: string | null, limit: number): PoisonStatement;
  remove(consumer: string, key: string): PoisonStatement;
  /** Moves a replayable record (one with a message id, stored whole) to `replay-requested`. */
  requestReplay(consumer: string, key: string): PoisonStatement;
  readonly counts: string;
  readonly probe: string;
  /** Deletes the records of messages that failed and were then handled (they have an inbox mark); returns a row each. */
  readonly sweep: string;
  /** Deletes the inbox mark of (consumer, message id). */
  readonly unmark: string;
  createTable(): string[];
  dropTable(): string[];
}

const COLUMNS = (time: (column: string) => string, q = '"') =>
  `consumer, message_key AS ${q}key${q}, message_id AS ${q}messageId${q}, raw, truncated, reason, attempts, state, ` +
  `${time('first_failed_at')} AS ${q}firstFailedAt${q}, ${time('last_failed_at')} AS ${q}lastFailedAt${q}`;

const INSERT_COLUMNS = '(consumer, message_key, message_id, raw, truncated, reason, attempts, state, first_failed_at, last_failed_at)';

/**
 * The reads and small writes, the same on every database but for placeholders (`$n` or `?`), the
 * cast PostgreSQL needs to test a parameter for NULL, and how "not truncated" is written.
 *
 * A message that failed and was then handled keeps its `failing` record until the next sweep: the
 * handler's transaction does not delete it (that DELETE cost a third of the inbox's throughput).
 * Reads leave such records out, so they are never shown or counted.
 */
function recordStatements(
  t: string,
  inbox: string,
  time: (column: string) => string,
  q: string,
  p: (n: number) => string,
  { cast = '', notTruncated = 'truncated = 0', updateReturning = '', countCast = '' } = {},
) {
  const cols = COLUMNS(time, q);
  const byKey = `consumer = ${p(1)} AND message_key = ${p(2)}`;
  const handled = `EXISTS (SELECT 1 FROM ${inbox} i WHERE i.consumer = ${t}.consumer AND i.message_id = ${t}.message_key)`;
  const visible = `(state <> 'failing' OR NOT ${handled})`;
  return {
    get: (consumer: string, key: string) => ({ sql: `SELECT ${cols} FROM ${t} WHERE ${byKey} AND ${visible}`, params: [consumer, key] }),
    list: (consumer: string | null, state: string | null, limit: number) => ({
      sql: `SELECT ${cols} FROM ${t} WHERE (${p(1)}${cast} IS NULL OR consumer = ${p(2)}) AND (${p(3)}${cast} IS NULL OR state = ${p(4)}) AND ${visible} ORDER BY last_failed_at DESC LIMIT ${p(5)}`,
      params: [consumer, consumer, state, state, limit],
    }),
    // The oldest first failure of each group gives status and health the age of what waits.
    counts: `SELECT consumer, state, COUNT(*)${countCast} AS count, ${time('MIN(first_failed_at)')} AS ${q}oldestFailedAt${q} FROM ${t} WHERE ${visible} GROUP BY consumer, state`,
    sweep: `DELETE FROM ${t} WHERE state = 'failing' AND ${handled} RETURNING 1 AS swept`,
    unmark: `DELETE FROM ${inbox} WHERE consumer = ${p(1)} AND message_id = ${p(2)}`,
    remove: (consumer: string, key: string) => ({ sql: `DELETE FROM ${t} WHERE ${byKey} RETURNING 1 AS removed`, params: [consumer, key] }),
    // The store reads the record again to tell the outcome: MariaDB's UPDATE returns no rows. SQLite's
    // statements run through better-sqlite3's all(), which wants rows: there it returns one.
    requestReplay: (consumer: string, key: string) => ({
      sql: `UPDATE ${t} SET state = 'replay-requested' WHERE ${byKey} AND message_id IS NOT NULL AND ${notTruncated}${updateReturning}`,
      params: [consumer, key],
    }),
    probe: `SELECT consumer FROM ${t} WHERE 1 = 0`,
  };
}

export function poisonDialectFor(driverType: string, table: string, inboxTable: string = DEFAULT_INBOX_TABLE): PoisonSqlDialect {
  switch (driverType) {
    case 'postgres': {
      const t = `"${table}"`;
      const time = (c: string) => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
      const cols = COLUMNS(time);
      return {
        countFailure: (f, limit) => ({
          sql: `INSERT INTO ${t} AS p ${INSERT_COLUMNS}
                VALUES ($1, $2, $3, $4, $5, $6, 1, CASE WHEN $7::int <= 1 THEN 'set-aside' ELSE 'failing' END, now(), now())
                ON CONFLICT (consumer, message_key) DO UPDATE SET
                  attempts = p.attempts + 1, raw = EXCLUDED.raw, truncated = EXCLUDED.truncated, reason = EXCLUDED.reason, last_failed_at = now(),
                  state = CASE WHEN p.state <> 'failing' OR p.attempts + 1 >= $7::int THEN 'set-aside' ELSE 'failing' END
                RETURNING ${cols}`,
          params: [f.consumer, f.key, f.messageId ?? null, f.raw, f.truncated, f.reason, limit],
        }),
        readAfterCount: false,
        ...recordStatements(t, `"${inboxTable}"`, time, '"', (n) => `$${n}`, { cast: '::text', notTruncated: 'NOT truncated', countCast: '::int' }),
        createTable: () => [
          `CREATE TABLE ${t} (
            consumer varchar(255) NOT NULL,
            message_key varchar(255) NOT NULL,
            message_id varchar(255),
            raw text NOT NULL,
            truncated boolean NOT NULL,
            reason text NOT NULL,
            attempts integer NOT NULL,
            state varchar(16) NOT NULL,
            first_failed_at timestamptz NOT NULL,
            last_failed_at timestamptz NOT NULL,
            CONSTRAINT "${table}_pkey" PRIMARY KEY (consumer, message_key))`,
          `CREATE INDEX "${table}_last_failed_idx" ON ${t} (last_failed_at)`,
        ],
        dropTable: () => [`DROP TABLE IF EXISTS ${t}`],
      };
    }
    case 'better-sqlite3': {
      const t = `"${table}"`;
      const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
      const cols = COLUMNS((c) => c);
      return {
        countFailure: (f, limit) => ({
          sql: `INSERT INTO ${t} ${INSERT_COLUMNS}
                VALUES (?, ?, ?, ?, ?, ?, 1, CASE WHEN ? <= 1 THEN 'set-aside' ELSE 'failing' END, ${now}, ${now})
                ON CONFLICT (consumer, message_key) DO UPDATE SET
                  attempts = attempts + 1, raw = excluded.raw, truncated = excluded.truncated, reason = excluded.reason, last_failed_at = ${now},
                  state = CASE WHEN state <> 'failing' OR attempts + 1 >= ? THEN 'set-aside' ELSE 'failing' END
                RETURNING ${cols}`,
          params: [f.consumer, f.key, f.messageId ?? null, f.raw, f.truncated ? 1 : 0, f.reason, limit, limit],
        }),
        readAfterCount: false,
        ...recordStatements(t, `"${inboxTable}"`, (c) => c, '"', () => '?', { updateReturning: ' RETURNING 1 AS requested' }),
        createTable: () => [
          `CREATE TABLE ${t} (
            consumer varchar(255) NOT NULL,
            message_key varchar(255) NOT NULL,
            message_id varchar(255),
            raw text NOT NULL,
            truncated integer NOT NULL,
            reason text NOT NULL,
            attempts integer NOT NULL,
            state varchar(16) NOT NULL,
            first_failed_at varchar(24) NOT NULL,
            last_failed_at varchar(24) NOT NULL,
            PRIMARY KEY (consumer, message_key))`,
          `CREATE INDEX "${table}_last_failed_idx" ON ${t} (last_failed_at)`,
        ],
        dropTable: () => [`DROP TABLE IF EXISTS ${t}`],
      };
    }
    case 'mariadb':
    case 'mysql': {
      const t = `\`${table}\``;
      const time = (c: string) => `CONCAT(DATE_FORMAT(${c}, '%Y-%m-%dT%H:%i:%s.'), LEFT(DATE_FORMAT(${c}, '%f'), 3), 'Z')`;
      const cols = COLUMNS(time, '`');
      return {
        // `state` is assigned before `attempts`: MariaDB applies the assignments left to right.
        countFailure: (f, limit) => ({
          sql: `INSERT INTO ${t} ${INSERT_COLUMNS}
                VALUES (?, ?, ?, ?, ?, ?, 1, IF(? <= 1, 'set-aside', 'failing'), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
                ON DUPLICATE KEY UPDATE
                  state = IF(state <> 'failing' OR attempts + 1 >= ?, 'set-aside', 'failing'),
                  attempts = attempts + 1, raw = VALUES(raw), truncated = VALUES(truncated), reason = VALUES(reason), last_failed_at = UTC_TIMESTAMP(3)`,
          params: [f.consumer, f.key, f.messageId ?? null, f.raw, f.truncated ? 1 : 0, f.reason, limit, limit],
        }),
        readAfterCount: true,
        ...recordStatements(t, `\`${inboxTable}\``, time, '`', () => '?'),
        createTable: () => [
          `CREATE TABLE ${t} (
            consumer varchar(255) NOT NULL,
            message_key varchar(255) NOT NULL,
            message_id varchar(255) NULL,
            raw mediumtext NOT NULL,
            truncated tinyint(1) NOT NULL,
            reason text NOT NULL,
            attempts int NOT NULL,
            state varchar(16) NOT NULL,
            first_failed_at datetime(3) NOT NULL,
            last_failed_at datetime(3) NOT NULL,
            PRIMARY KEY (consumer, message_key),
            KEY \`${table}_last_failed_idx\` (last_failed_at)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
        ],
        dropTable: () => [`DROP TABLE IF EXISTS ${t}`],
      };
    }
    default:
      throw new OutboxConfigurationError(unsupportedDatabase(driverType));
  }
}
