import type { DataSource } from 'typeorm';
import type { MessageFilter } from '../../core/console/outbox-console.port';
import type { SqlStatement } from '../dialects/outbox-sql.dialect';
import { runnerFor } from '../sql-runners';
import type { ConsoleChange, ConsoleSql } from './console.sql';
import { SqlOutboxConsoleStore } from './sql-outbox-console.store';

/**
 * The console's store on MariaDB / MySQL: reads as on the other databases; changes report affected
 * rows instead of returning them, so a bulk batch locks its rows first and then changes exactly those.
 */
export class MariaDbOutboxConsoleStore extends SqlOutboxConsoleStore {
  constructor(
    private readonly consoleSql: ConsoleSql,
    private readonly dataSource: DataSource,
  ) {
    super(consoleSql, runnerFor(dataSource));
  }

  override requeueBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return this.changeBatch('requeue', filter, after, limit);
  }

  override discardBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return this.changeBatch('discard', filter, after, limit);
  }

  override retryNowBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return this.changeBatch('retry-now', { ...filter, retrying: true }, after, limit);
  }

  override async pause(destination: string, reason: string | null): Promise<boolean> {
    return (await this.affected(this.consoleSql.pauseIgnoring(destination, reason))) > 0;
  }

  override async resume(destination: string): Promise<boolean> {
    return (await this.affected(this.consoleSql.resumeCounting(destination))) > 0;
  }

  private async changeBatch(kind: ConsoleChange, filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      await queryRunner.startTransaction('READ COMMITTED');
      try {
        const { sql, params } = this.consoleSql.lockBatch(filter, after, limit);
        const positions = ((await queryRunner.query(sql, params)) as Array<{ position: unknown }>).map((row) => String(row.position));
        if (positions.length > 0) {
          const change = this.consoleSql.changePositions(kind, positions);
          await queryRunner.query(change.sql, change.params);
        }
        await queryRunner.commitTransaction();
        // Locked and matching the filter (dead, or in backoff): every one of them was changed.
        return positions;
      } catch (error) {
        await queryRunner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
    } finally {
      await queryRunner.release();
    }
  }

  private async affected({ sql, params }: SqlStatement): Promise<number> {
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      return (await queryRunner.query(sql, params, true)).affected ?? 0;
    } finally {
      await queryRunner.release();
    }
  }
}
