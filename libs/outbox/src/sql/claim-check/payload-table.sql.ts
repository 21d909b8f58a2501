import type { SqlStatement } from '../../core/sql-connection.port';
import type { SqlDialectName } from '../../core/sql-transaction.port';
import type { OutboxTable, QuoteStyle } from '../dialects/outbox-table';

const SQLITE_NOW = `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
const SQLITE_AGO = `strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (? / 1000.0) || ' seconds')`;

/**
 * The payloads table beside the outbox, `<outbox table>_payloads`: claim-checked payloads keyed by
 * the id of their message's first row (the type of the outbox's `id`, so that retention joins them on it). Plain columns, so that a consumer in any language reads one
 * with `SELECT payload FROM … WHERE payload_key = ?` (docs/claim-check.md).
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
        payload text NOT NULL)`;
      case 'sqlite':
        return `CREATE TABLE ${this.t} (
        payload_key varchar(36) PRIMARY KEY,
        created_at varchar(30) NOT NULL DEFAULT (${SQLITE_NOW}),
        byte_size integer NOT NULL,
        sha256 char(64) NOT NULL,
        payload text NOT NULL)`;
      case 'mariadb':
        return `CREATE TABLE ${this.t} (
        payload_key char(36) NOT NULL PRIMARY KEY,
        created_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        byte_size bigint NOT NULL,
        sha256 char(64) NOT NULL,
        payload longtext NOT NULL,
        KEY ${this.table.quotedPart('payloads_created_at', 'mariadb')} (created_at)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
    }
  }

  /** Retention reads by age: PostgreSQL and SQLite need the index as a statement of its own. */
  createIndex(): string[] {
    if (this.dialect === 'mariadb') return [];
    return [`CREATE INDEX ${this.table.quotedPart('payloads_created_at', quoteStyle(this.dialect))} ON ${this.t} (created_at)`];
  }

  dropTable(): string {
    return `DROP TABLE IF EXISTS ${this.t}`;
  }

  insert(key: string, bytes: number, sha256: string, payloadJson: string): SqlStatement {
    const sql =
      this.dialect === 'postgres'
        ? `INSERT INTO ${this.t} (payload_key, byte_size, sha256, payload) VALUES ($1, $2, $3, $4)`
        : `INSERT INTO ${this.t} (payload_key, byte_size, sha256, payload) VALUES (?, ?, ?, ?)`;
    return { sql, params: [key, bytes, sha256, payloadJson] };
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
    const waiting = (alias: string) => `NOT EXISTS (SELECT 1 FROM ${outbox} o WHERE o.id = ${alias}.payload_key AND o.status IN ('pending', 'dead'))`;
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
