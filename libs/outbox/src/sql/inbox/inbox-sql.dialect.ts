import { OutboxConfigurationError } from '../../core/outbox.errors';
import { invalidIdentifier, unsupportedDatabase } from '../../core/outbox.messages';
import { isIdentifier } from '../../core/names';

export const DEFAULT_INBOX_TABLE = 'outbox_inbox';

/** A statement's result as TypeORM's `query(…, true)` and the library's own connections give it. */
export interface QueryResult {
  records?: unknown[];
  affected?: number;
  raw?: unknown;
}

/** The inbox's SQL for one database family. */
export interface InboxSqlDialect {
  /** Inserts the mark unless the pair is already there; a concurrent insert of the same pair waits for its transaction. */
  readonly mark: string;
  /** Whether `mark` inserted a row. */
  inserted(result: QueryResult): boolean;
  /** Parameters: retention in ms, batch size. */
  readonly prune: string;
  pruned(result: QueryResult): number;
  /** A cheap statement that fails when the table is missing. */
  readonly probe: string;
  createTable(): string[];
  dropTable(): string[];
}

const returnedRows = (result: QueryResult) => (Array.isArray(result.records) ? result.records.length : 0);

/** Every inbox entry point builds its SQL here, so the table name is checked here, before any of it exists. */
export function inboxDialectFor(driverType: string, table: string): InboxSqlDialect {
  if (!isIdentifier(table)) throw new OutboxConfigurationError(invalidIdentifier('The inbox table name', table));
  const t = `"${table}"`;
  switch (driverType) {
    case 'postgres':
      return {
        mark: `INSERT INTO ${t} (consumer, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS inserted`,
        inserted: (result) => returnedRows(result) > 0,
        prune: `DELETE FROM ${t} WHERE (consumer, message_id) IN (
                  SELECT consumer, message_id FROM ${t} WHERE processed_at < now() - $1 * interval '1 millisecond' LIMIT $2 FOR UPDATE SKIP LOCKED)
                RETURNING 1`,
        pruned: returnedRows,
        probe: `SELECT consumer FROM ${t} WHERE 1 = 0`,
        createTable: () => [
          `CREATE TABLE ${t} (
            consumer varchar(255) NOT NULL,
            message_id varchar(255) NOT NULL,
            processed_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT "${table}_pkey" PRIMARY KEY (consumer, message_id))`,
          `CREATE INDEX "${table}_processed_idx" ON ${t} (processed_at)`,
        ],
        dropTable: () => [`DROP TABLE IF EXISTS ${t}`],
      };
    case 'better-sqlite3':
      return {
        mark: `INSERT OR IGNORE INTO ${t} (consumer, message_id) VALUES (?, ?) RETURNING 1 AS inserted`,
        inserted: (result) => returnedRows(result) > 0,
        prune: `DELETE FROM ${t} WHERE rowid IN (
                  SELECT rowid FROM ${t} WHERE processed_at < strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (? / 1000.0) || ' seconds') LIMIT ?)
                RETURNING 1`,
        pruned: returnedRows,
        probe: `SELECT consumer FROM ${t} WHERE 1 = 0`,
        createTable: () => [
          `CREATE TABLE ${t} (
            consumer varchar(255) NOT NULL,
            message_id varchar(255) NOT NULL,
            processed_at varchar(24) NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
            PRIMARY KEY (consumer, message_id))`,
          `CREATE INDEX "${table}_processed_idx" ON ${t} (processed_at)`,
        ],
        dropTable: () => [`DROP TABLE IF EXISTS ${t}`],
      };
    case 'mariadb':
    case 'mysql': {
      const q = `\`${table}\``;
      return {
        // Names are checked for length before this runs, so IGNORE only ever ignores the duplicate key.
        mark: `INSERT IGNORE INTO ${q} (consumer, message_id, processed_at) VALUES (?, ?, UTC_TIMESTAMP(3))`,
        inserted: (result) => (result.affected ?? affectedRows(result.raw)) > 0,
        prune: `DELETE FROM ${q} WHERE processed_at < UTC_TIMESTAMP(3) - INTERVAL (? * 1000) MICROSECOND ORDER BY processed_at LIMIT ?`,
        pruned: (result) => result.affected ?? affectedRows(result.raw),
        probe: `SELECT consumer FROM ${q} WHERE 1 = 0`,
        createTable: () => [
          `CREATE TABLE ${q} (
            consumer varchar(255) NOT NULL,
            message_id varchar(255) NOT NULL,
            processed_at datetime(3) NOT NULL,
            PRIMARY KEY (consumer, message_id),
            KEY \`${table}_processed_idx\` (processed_at)) ENGINE=InnoDB`,
        ],
        dropTable: () => [`DROP TABLE IF EXISTS ${q}`],
      };
    }
    default:
      throw new OutboxConfigurationError(unsupportedDatabase(driverType));
  }
}

function affectedRows(raw: unknown): number {
  return typeof raw === 'object' && raw !== null ? Number((raw as { affectedRows?: number }).affectedRows ?? 0) : 0;
}
