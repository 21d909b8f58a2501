import type { ClaimCheckReference, ClaimedPayload } from '../../core/claim-check/claim-check-reference';
import type { PayloadCollector, PayloadReader, PayloadStore } from '../../core/claim-check/payload-store.port';
import type { SqlConnection, SqlRunner } from '../../core/sql-connection.port';
import { executeAtCommitOrNow, type SqlDialectName, type SqlTransaction } from '../../core/sql-transaction.port';
import { OutboxTable, type OutboxTableLocation } from '../dialects/outbox-table';
import { PayloadTableSql } from './payload-table.sql';

/** The name of the database store in references (`store`). */
export const DATABASE_PAYLOAD_STORE = 'database';

/**
 * The default claim-check store: the payloads table beside the outbox, written in the caller's
 * transaction with the event's row (or WAL message), so the payload commits or rolls back with it.
 */
export class DatabasePayloadStore implements PayloadStore {
  readonly name = DATABASE_PAYLOAD_STORE;
  private readonly table: OutboxTable;
  private readonly statements = new Map<SqlDialectName, PayloadTableSql>();

  constructor(table: string | OutboxTableLocation | OutboxTable) {
    this.table = OutboxTable.of(table);
  }

  get location(): string {
    return this.table.payloads.toString();
  }

  async put(transaction: SqlTransaction, payloads: readonly ClaimedPayload[]): Promise<void> {
    const sql = this.sqlOf(transaction.dialect);
    for (const { reference, payloadJson } of payloads) {
      const { sql: text, params } = sql.insert(reference.key, reference.bytes, reference.sha256, this.name, payloadJson);
      // Before the row that refers to it, on the same path: with the COMMIT where the layer carries statements there.
      await executeAtCommitOrNow(transaction, text, params);
    }
  }

  /** Cleanup's view of the store on `connection`: payloads past retention. A rolled-back transaction leaves none to collect. */
  collector(connection: SqlConnection): PayloadCollector {
    return { deleteExpired: (olderThanMs, limit) => this.deleteExpired(connection, olderThanMs, limit) };
  }

  /** Deletes up to `limit` payloads past retention whose rows are settled; resolves with how many went. */
  async deleteExpired(connection: SqlConnection, olderThanMs: number, limit: number): Promise<number> {
    return (await connection.run(this.sqlOf(connection.dialect).deleteExpired(olderThanMs, limit))).affected;
  }

  /** Reads payloads of this table through `runner` (any connection to the database that holds it). */
  reader(dialect: SqlDialectName, runner: SqlRunner): PayloadReader {
    return new DatabasePayloadReader(this.sqlOf(dialect), runner);
  }

  sqlOf(dialect: SqlDialectName): PayloadTableSql {
    let sql = this.statements.get(dialect);
    if (!sql) this.statements.set(dialect, (sql = new PayloadTableSql(this.table, dialect)));
    return sql;
  }
}

/** Reads the payloads table of one database. */
export class DatabasePayloadReader implements PayloadReader {
  readonly name = DATABASE_PAYLOAD_STORE;
  readonly location: string;

  constructor(
    private readonly sql: PayloadTableSql,
    private readonly runner: SqlRunner,
  ) {
    this.location = sql.location;
  }

  async get(reference: ClaimCheckReference): Promise<string | undefined> {
    const [row] = await this.runner.rows(this.sql.select(reference.key));
    const payload = row?.payload;
    return payload === undefined || payload === null ? undefined : String(payload);
  }
}
