import type { DataSource } from 'typeorm';
import type { DeadLetterOutcome, DeadMessage, OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import type { OutboxMessageStatus } from '../core/outbox-message';
import { PostgresMaintenanceSql, SqliteMaintenanceSql, type OutboxMaintenanceSql } from './dialects/outbox-maintenance.sql';
import { runnerFor, type SqlRunner } from './sql-runners';
import { MariaDbOutboxDialect } from './dialects/mariadb-outbox.dialect';
import { MariaDbOutboxStore } from './mariadb-outbox.store';

export class SqlOutboxMaintenanceStore implements OutboxMaintenanceStore {
  constructor(
    private readonly sql: OutboxMaintenanceSql,
    private readonly runner: SqlRunner,
  ) {}

  async listDead(after: string, limit: number): Promise<DeadMessage[]> {
    const rows = await this.runner.rows(this.sql.listDead(after, limit));
    return rows.map((row) => ({
      position: String(row.position),
      id: String(row.id),
      type: String(row.type),
      version: Number(row.version),
      aggregateType: String(row.aggregateType),
      aggregateId: String(row.aggregateId),
      transport: String(row.transport),
      destination: String(row.destination),
      attempts: Number(row.attempts),
      lastError: (row.lastError as string | null) ?? null,
      errors: JSON.parse((row.errorHistory as string | null) ?? '[]'),
      occurredAt: row.occurredAt instanceof Date ? row.occurredAt.toISOString() : String(row.occurredAt),
      deadAt: row.deadAt instanceof Date ? row.deadAt.toISOString() : ((row.deadAt as string | null) ?? null),
    }));
  }

  requeue(id: string): Promise<DeadLetterOutcome> {
    return this.changeDead(id, this.sql.requeue(id));
  }

  discard(id: string): Promise<DeadLetterOutcome> {
    return this.changeDead(id, this.sql.discard(id));
  }

  async deletePublished(olderThanMs: number, limit: number): Promise<number> {
    return (await this.runner.rows(this.sql.deletePublished(olderThanMs, limit))).length;
  }

  async deleteDead(olderThanMs: number, limit: number): Promise<number> {
    return (await this.runner.rows(this.sql.deleteDead(olderThanMs, limit))).length;
  }

  private async changeDead(id: string, statement: ReturnType<OutboxMaintenanceSql['requeue']>): Promise<DeadLetterOutcome> {
    if ((await this.runner.rows(statement)).length > 0) return 'done';
    const [row] = await this.runner.rows(this.sql.statusOf(id));
    return row ? (row.status as Exclude<OutboxMessageStatus, 'dead'>) : 'missing';
  }
}

export function createSqlOutboxMaintenanceStore(dataSource: DataSource, tableName: string): OutboxMaintenanceStore {
  const type = dataSource.options.type;
  if (type === 'mariadb' || type === 'mysql') return new MariaDbOutboxStore(dataSource, new MariaDbOutboxDialect(tableName));
  const sql = dataSource.options.type === 'postgres' ? new PostgresMaintenanceSql(tableName) : new SqliteMaintenanceSql(tableName);
  return new SqlOutboxMaintenanceStore(sql, runnerFor(dataSource));
}
