import { validateTableName } from '../../core/names';
import type { PoisonCount, PoisonFailure, PoisonListFilter, PoisonRecord, PoisonState, PoisonStore } from '../../core/poison/poison.port';
import { inboxDialectFor } from '../inbox/inbox-sql.dialect';
import { recordVanished } from '../../core/poison/poison.messages';
import type { SqlStatement } from '../../core/sql-connection.port';
import { driverTypeOf, type SqlConnection, type SqlRunner } from '../../core/sql-connection.port';
import { poisonDialectFor, type PoisonSqlDialect } from './poison-sql.dialect';

/** Runs a statement in the handler's transaction `T` and returns its rows. */
export type TransactionRows<T> = (transaction: T, statement: SqlStatement) => Promise<Record<string, unknown>[]>;

/**
 * The poison table on one connection. Failures are counted outside the handler's transaction
 * (on TypeORM's SQLite, between transactions on the one shared connection), so a rollback keeps the
 * count; `claim` and `unmark` run in the handler's transaction, of whichever data layer `T` is.
 */
export class SqlPoisonStore<T> implements PoisonStore<T> {
  private readonly dialect: PoisonSqlDialect;
  private readonly runner: SqlRunner;
  private readonly markSql: string;

  constructor(
    connection: SqlConnection,
    readonly tableName: string,
    readonly inboxTableName: string,
    private readonly inTransaction: TransactionRows<T>,
  ) {
    const type = driverTypeOf(connection.dialect);
    this.dialect = poisonDialectFor(type, validateTableName(tableName), validateTableName(inboxTableName));
    this.markSql = inboxDialectFor(type, inboxTableName).mark;
    this.runner = connection.runner();
  }

  async countFailure(failure: PoisonFailure, setAsideAt: number): Promise<PoisonRecord> {
    const rows = await this.runner.rows(this.dialect.countFailure(failure, setAsideAt));
    const record = this.dialect.readAfterCount ? await this.get(failure.consumer, failure.key) : toRecord(rows[0]);
    if (!record) throw new Error(recordVanished(failure.consumer, failure.key));
    // The mark makes a redelivery of a set-aside message a duplicate. Written after the record: a crash
    // in between leaves a record without a mark, and the redelivery counts it again and marks it then.
    if (record.state === 'set-aside' && failure.messageId !== undefined) {
      await this.runner.rows({ sql: this.markSql, params: [failure.consumer, failure.messageId] });
    }
    return record;
  }

  async claim(transaction: T, consumer: string, key: string): Promise<boolean> {
    return (await this.inTransaction(transaction, this.dialect.remove(consumer, key))).length > 0;
  }

  async unmark(transaction: T, consumer: string, messageId: string): Promise<void> {
    await this.inTransaction(transaction, { sql: this.dialect.unmark, params: [consumer, messageId] });
  }

  async sweep(): Promise<number> {
    return (await this.runner.rows({ sql: this.dialect.sweep, params: [] })).length;
  }

  async get(consumer: string, key: string): Promise<PoisonRecord | undefined> {
    const rows = await this.runner.rows(this.dialect.get(consumer, key));
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async list(filter: PoisonListFilter): Promise<PoisonRecord[]> {
    const rows = await this.runner.rows(this.dialect.list(filter.consumer ?? null, filter.state ?? null, filter.limit));
    return rows.map(toRecord);
  }

  async remove(consumer: string, key: string): Promise<boolean> {
    return (await this.runner.rows(this.dialect.remove(consumer, key))).length > 0;
  }

  async requestReplay(consumer: string, key: string): Promise<boolean> {
    await this.runner.rows(this.dialect.requestReplay(consumer, key));
    // Read back rather than count affected rows, which MariaDB's UPDATE does not return as rows.
    return (await this.get(consumer, key))?.state === 'replay-requested';
  }

  async counts(): Promise<PoisonCount[]> {
    const rows = await this.runner.rows({ sql: this.dialect.counts, params: [] });
    return rows.map((row) => ({ consumer: String(row.consumer), state: row.state as PoisonState, count: Number(row.count), oldestFailedAt: String(row.oldestFailedAt) }));
  }

  /** Fails when the table is missing. */
  async probe(): Promise<void> {
    await this.runner.rows({ sql: this.dialect.probe, params: [] });
  }
}

function toRecord(row: Record<string, unknown>): PoisonRecord {
  return {
    consumer: String(row.consumer),
    key: String(row.key),
    messageId: row.messageId === null || row.messageId === undefined ? null : String(row.messageId),
    raw: String(row.raw),
    truncated: row.truncated === true || Number(row.truncated) === 1,
    reason: String(row.reason),
    attempts: Number(row.attempts),
    state: row.state as PoisonState,
    firstFailedAt: String(row.firstFailedAt),
    lastFailedAt: String(row.lastFailedAt),
  };
}
