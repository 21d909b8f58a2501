import type { MessageFilter } from '../../core/console/outbox-console.port';
import type { SqlStatement } from '../../core/sql-connection.port';
import type { SqlConnection } from '../../core/sql-connection.port';
import type { ConsoleChange, ConsoleSql } from './console.sql';
import { SqlOutboxConsoleStore } from './sql-outbox-console.store';

/**
 * The console's store on MariaDB / MySQL: reads as on the other databases; changes report affected
 * rows instead of returning them, so a bulk batch locks its rows first and then changes exactly those.
 */
export class MariaDbOutboxConsoleStore extends SqlOutboxConsoleStore {
  constructor(
    private readonly consoleSql: ConsoleSql,
    private readonly connection: SqlConnection,
  ) {
    super(consoleSql, connection.runner());
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

  private changeBatch(kind: ConsoleChange, filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return this.connection.transaction(async (run) => {
      const positions = (await run(this.consoleSql.lockBatch(filter, after, limit))).records.map((row) => String(row.position));
      if (positions.length > 0) await run(this.consoleSql.changePositions(kind, positions));
      // Locked and matching the filter (dead, or in backoff): every one of them was changed.
      return positions;
    });
  }

  private async affected(statement: SqlStatement): Promise<number> {
    return (await this.connection.run(statement)).affected;
  }
}
