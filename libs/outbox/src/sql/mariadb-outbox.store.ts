import type { DeadLetterOutcome, DeadMessage, OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import type { ClaimedMessage, OutboxMessageStatus } from '../core/outbox-message';
import type { ClaimRequest, FailedDelivery, OutboxStore } from '../core/outbox-store.port';
import type { MariaDbOutboxDialect } from './dialects/mariadb-outbox.dialect';
import type { OutboxRowRecord } from './dialects/outbox-sql.dialect';
import type { SqlStatement } from '../core/sql-connection.port';
import { toClaimedMessage } from './sql-outbox.store';
import { toDeadMessage } from './sql-outbox-maintenance.store';
import type { SqlConnection, SqlResult, SqlSession } from '../core/sql-connection.port';

/** The outbox store on MariaDB / MySQL, where changes report affected rows instead of returning them. */
export class MariaDbOutboxStore implements OutboxStore, OutboxMaintenanceStore {
  constructor(
    private readonly connection: SqlConnection,
    private readonly dialect: MariaDbOutboxDialect,
  ) {}

  claim({ owner, token, limit, leaseMs }: ClaimRequest): Promise<ClaimedMessage[]> {
    return this.inTransaction(async (run) => {
      const candidates = (await run(this.dialect.candidates(limit))).records;
      if (candidates.length === 0) return [];
      const locked = new Set((await run(this.dialect.lockFree(candidates.map((row) => String(row.position))))).records.map((row) => String(row.position)));
      const free = unbrokenRuns(candidates, locked);
      if (free.length === 0) return [];
      await run(this.dialect.lease(owner, token, leaseMs, free));
      const records = (await run(this.dialect.fetch(free))).records as unknown as OutboxRowRecord[];
      return records.map(toClaimedMessage);
    });
  }

  async markPublished(token: string, positions: string[]): Promise<number> {
    if (positions.length === 0) return 0;
    return (await this.execute(this.dialect.markPublished(token, positions))).affected;
  }

  async markFailed(token: string, failures: FailedDelivery[]): Promise<number> {
    if (failures.length === 0) return 0;
    return this.inTransaction(async (run) => {
      let changed = 0;
      for (const failure of failures) changed += (await run(this.dialect.markFailed(token, failure))).affected;
      return changed;
    });
  }

  async giveBack(token: string, positions: string[]): Promise<number> {
    if (positions.length === 0) return 0;
    return (await this.execute(this.dialect.giveBack(token, positions))).affected;
  }

  async release(owner: string): Promise<number> {
    return (await this.execute(this.dialect.release(owner))).affected;
  }

  async probe(): Promise<void> {
    await this.execute(this.dialect.probe());
  }

  async listDead(after: string, limit: number): Promise<DeadMessage[]> {
    return (await this.execute(this.dialect.listDead(after, limit))).records.map(toDeadMessage);
  }

  requeue(id: string): Promise<DeadLetterOutcome> {
    return this.changeDead(id, true);
  }

  discard(id: string): Promise<DeadLetterOutcome> {
    return this.changeDead(id, false);
  }

  async deletePublished(olderThanMs: number, limit: number): Promise<number> {
    return (await this.execute(this.dialect.deleteSettled('published', olderThanMs, limit))).affected;
  }

  async deleteDead(olderThanMs: number, limit: number): Promise<number> {
    return (await this.execute(this.dialect.deleteSettled('dead', olderThanMs, limit))).affected;
  }

  private async changeDead(id: string, requeue: boolean): Promise<DeadLetterOutcome> {
    if ((await this.execute(this.dialect.setDeadStatus(id, requeue))).affected > 0) return 'done';
    const [row] = (await this.execute(this.dialect.statusOf(id))).records;
    return row ? (row.status as Exclude<OutboxMessageStatus, 'dead'>) : 'missing';
  }

  private execute(statement: SqlStatement): Promise<SqlResult> {
    return this.connection.run(statement);
  }

  private inTransaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T> {
    return this.connection.transaction(work);
  }
}

/**
 * Of each aggregate's run (candidates come in position order), the rows before the first one the
 * claim could not lock: another relay holds it, so nothing behind it may go.
 */
function unbrokenRuns(candidates: Record<string, unknown>[], locked: ReadonlySet<string>): string[] {
  const broken = new Set<string>();
  const free: string[] = [];
  for (const row of candidates) {
    const key = JSON.stringify([row.aggregate_type, row.aggregate_id, row.transport, row.destination]);
    const position = String(row.position);
    if (broken.has(key)) continue;
    if (locked.has(position)) free.push(position);
    else broken.add(key);
  }
  return free;
}
