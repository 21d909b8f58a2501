import type { SqlStatement } from '../../core/sql-connection.port';
import type { SqlDialectName } from '../../core/sql-transaction.port';
import type { OutboxTable, QuoteStyle } from '../dialects/outbox-table';

const SQLITE_NOW = `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
const SQLITE_AGO = `strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (? / 1000.0) || ' seconds')`;

/**
 * The payloads table beside the outbox, `<outbox table>_payloads`: claim-checked payloads keyed by
 * the id of their message's first row (the type of the outbox's `id`, so that retention joins them on it). Plain columns, so that a consumer in any language reads one
 * with `SELECT payload FROM … WHERE payload_key = ?` (docs/claim-check.md). A payload kept in S3 has
 * a row here too, without `payload` (`store = 's3'`): written in the transaction, it tells a committed
 * object from one whose transaction rolled back.
 */
export class PayloadTableSql {
  private readonly t: string;

  constructor(
    private readonly table: OutboxTable,
    private readonly dialect: SqlDialectName,
  ) {
    this.t = table.payloads.quoted(quoteStyle(dialect));
  }

  /** What references name as their `location`. */
  get location(): string {
    return this.table.payloads.toString();
  }

  createTable(): string {
    switch (this.dialect) {
      case 'postgres':
        return `CREATE TABLE ${this.t} (
        payload_key uuid PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        byte_size bigint NOT NULL,
        sha256 char(64) NOT NULL,
        store varchar(16) NOT NULL DEFAULT 'database',
        payload text NULL)`;
      case 'sqlite':
        return `CREATE TABLE ${this.t} (
        payload_key varchar(36) PRIMARY KEY,
        created_at varchar(30) NOT NULL DEFAULT (${SQLITE_NOW}),
        byte_size integer NOT NULL,
        sha256 char(64) NOT NULL,
        store varchar(16) NOT NULL DEFAULT 'database',
        payload text NULL)`;
      case 'mariadb':
        return `CREATE TABLE ${this.t} (
        payload_key char(36) NOT NULL PRIMARY KEY,
        created_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        byte_size bigint NOT NULL,
        sha256 char(64) NOT NULL,
        store varchar(16) NOT NULL DEFAULT 'database',
        payload longtext NULL,
        KEY ${this.table.quotedPart('payloads_created_at', 'mariadb')} (created_at)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
    }
  }

  /** Retention reads by age: PostgreSQL and SQLite need the index as a statement of its own. */
  createIndex(): string[] {
    if (this.dialect === 'mariadb') return [];
    return [`CREATE INDEX ${this.table.quotedPart('payloads_created_at', quoteStyle(this.dialect))} ON ${this.t} (created_at)`];
  }

  /** Reads no row but every column the stores use: startup says the table is missing, not the first large save. */
  probe(): SqlStatement {
    return { sql: `SELECT payload_key, created_at, byte_size, sha256, store, payload FROM ${this.t} WHERE 1 = 0`, params: [] };
  }

  dropTable(): string {
    return `DROP TABLE IF EXISTS ${this.t}`;
  }

  /** `payloadJson` null: the payload is kept in `store`, and the row only records that it committed. */
  insert(key: string, bytes: number, sha256: string, store: string, payloadJson: string | null): SqlStatement {
    return { sql: `INSERT INTO ${this.t} (payload_key, byte_size, sha256, store, payload) VALUES (${this.placeholders(5)})`, params: [key, bytes, sha256, store, payloadJson] };
  }

  /** Which of `keys` have a row (an object's transaction committed). */
  existing(keys: readonly string[]): SqlStatement {
    return { sql: `SELECT payload_key FROM ${this.t} WHERE payload_key IN (${this.placeholders(keys.length)})`, params: [...keys] };
  }

  /** Up to `limit` keys of `store` past retention whose rows are settled (as `deleteExpired`), to delete their objects first. */
  expiredKeys(store: string, olderThanMs: number, limit: number): SqlStatement {
    const ago = this.dialect === 'postgres' ? `now() - $2 * interval '1 millisecond'` : this.dialect === 'sqlite' ? SQLITE_AGO : 'NOW(3) - INTERVAL (? * 1000) MICROSECOND';
    const outbox = this.table.quoted(quoteStyle(this.dialect));
    return {
      sql: `SELECT p.payload_key AS payload_key FROM ${this.t} p WHERE p.store = ${this.dialect === 'postgres' ? '$1' : '?'} AND p.created_at < ${ago}
              AND NOT EXISTS (SELECT 1 FROM ${outbox} o WHERE o.id = p.payload_key AND o.status IN ('pending', 'dead'))
            ORDER BY p.created_at LIMIT ${this.dialect === 'postgres' ? '$3' : '?'}`,
      params: [store, olderThanMs, limit],
    };
  }

  deleteKeys(keys: readonly string[]): SqlStatement {
    return { sql: `DELETE FROM ${this.t} WHERE payload_key IN (${this.placeholders(keys.length)})`, params: [...keys] };
  }

  private placeholders(count: number): string {
    return Array.from({ length: count }, (_, index) => (this.dialect === 'postgres' ? `$${index + 1}` : '?')).join(', ');
  }

  select(key: string): SqlStatement {
    return { sql: `SELECT payload FROM ${this.t} WHERE payload_key = ${this.dialect === 'postgres' ? '$1' : '?'}`, params: [key] };
  }

  /**
   * Up to `limit` payloads stored more than `olderThanMs` ago whose first row is no longer waiting
   * (published and deleted, or never a row: the WAL mode's messages), so that a dead row requeued
   * later still finds its payload. Counted by the rows it changed.
   */
  deleteExpired(olderThanMs: number, limit: number): SqlStatement {
    const outbox = this.table.quoted(quoteStyle(this.dialect));
    // Rows of another store go with their objects (expiredKeys, deleteKeys).
    const waiting = (alias: string) => `${alias}.store = 'database' AND NOT EXISTS (SELECT 1 FROM ${outbox} o WHERE o.id = ${alias}.payload_key AND o.status IN ('pending', 'dead'))`;
    switch (this.dialect) {
      case 'postgres':
        return {
          sql: `DELETE FROM ${this.t} WHERE payload_key IN (
                  SELECT p.payload_key FROM ${this.t} p WHERE p.created_at < now() - $1 * interval '1 millisecond' AND ${waiting('p')}
                  ORDER BY p.created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
`,
          params: [olderThanMs, limit],
        };
      case 'sqlite':
        return {
          sql: `DELETE FROM ${this.t} WHERE payload_key IN (
                  SELECT p.payload_key FROM ${this.t} p WHERE p.created_at < ${SQLITE_AGO} AND ${waiting('p')} ORDER BY p.created_at LIMIT ?)
`,
          params: [olderThanMs, limit],
        };
      case 'mariadb':
        // MariaDB cannot delete from a table it reads in a subquery, nor LIMIT one; a multi-row DELETE with ORDER BY/LIMIT can.
        return {
          sql: `DELETE FROM ${this.t} WHERE created_at < NOW(3) - INTERVAL (? * 1000) MICROSECOND AND ${waiting(this.t)}
                ORDER BY created_at LIMIT ?`,
          params: [olderThanMs, limit],
        };
    }
  }
}

function quoteStyle(dialect: SqlDialectName): QuoteStyle {
  return dialect;
}

/** The payloads table's statements, for the outbox table's DDL (migrations, `outbox sql`, `outboxDdl`). */
export function createPayloadTable(table: OutboxTable, dialect: SqlDialectName): string[] {
  const sql = new PayloadTableSql(table, dialect);
  return [sql.createTable(), ...sql.createIndex()];
}

export function dropPayloadTable(table: OutboxTable, dialect: SqlDialectName): string {
  return new PayloadTableSql(table, dialect).dropTable();
}
