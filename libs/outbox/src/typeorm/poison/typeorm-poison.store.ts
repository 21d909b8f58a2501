import type { DataSource, EntityManager } from 'typeorm';
import { validateTableName } from '../../core/names';
import type { PoisonCount, PoisonFailure, PoisonListFilter, PoisonRecord, PoisonState, PoisonStore } from '../../core/poison/poison.port';
import { inboxDialectFor } from '../../sql/inbox/inbox-sql.dialect';
import { recordVanished } from '../../core/poison/poison.messages';
import { runnerFor, type SqlRunner } from '../sql-runners';
import { poisonDialectFor, type PoisonSqlDialect } from '../../sql/poison/poison-sql.dialect';

/**
 * The poison table of one data source. Failures are counted outside the handler's transaction
 * (on SQLite, between transactions on the one shared connection), so a rollback keeps the count.
 */
export class TypeOrmPoisonStore implements PoisonStore<EntityManager> {
  private readonly dialect: PoisonSqlDialect;
  private readonly runner: SqlRunner;
  private readonly markSql: string;

  constructor(
    dataSource: DataSource,
    readonly tableName: string,
    readonly inboxTableName: string,
  ) {
    this.dialect = poisonDialectFor(dataSource.options.type, validateTableName(tableName), validateTableName(inboxTableName));
    this.markSql = inboxDialectFor(dataSource.options.type, inboxTableName).mark;
    this.runner = runnerFor(dataSource);
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

  async claim(manager: EntityManager, consumer: string, key: string): Promise<boolean> {
    const { sql, params } = this.dialect.remove(consumer, key);
    const result = await manager.queryRunner!.query(sql, params, true);
    return Array.isArray(result.records) && result.records.length > 0;
  }

  async unmark(manager: EntityManager, consumer: string, messageId: string): Promise<void> {
    await manager.query(this.dialect.unmark, [consumer, messageId]);
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
