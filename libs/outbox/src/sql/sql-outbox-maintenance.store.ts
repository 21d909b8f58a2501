import type { DeadLetterOutcome, DeadMessage, OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import type { OutboxMessageStatus } from '../core/outbox-message';
import type { OutboxMaintenanceSql } from './dialects/outbox-maintenance.sql';
import type { SqlRunner } from '../core/sql-connection.port';

export class SqlOutboxMaintenanceStore implements OutboxMaintenanceStore {
  constructor(
    private readonly sql: OutboxMaintenanceSql,
    private readonly runner: SqlRunner,
  ) {}

  async listDead(after: string, limit: number): Promise<DeadMessage[]> {
    return (await this.runner.rows(this.sql.listDead(after, limit))).map(toDeadMessage);
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


/** A dead row as read by any dialect's `listDead` (columns under camelCase aliases). */
export function toDeadMessage(row: Record<string, unknown>): DeadMessage {
  const time = (value: unknown) => (value instanceof Date ? value.toISOString() : value === null || value === undefined ? null : String(value));
  return {
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
    occurredAt: time(row.occurredAt) ?? '',
    deadAt: time(row.deadAt),
  };
}
