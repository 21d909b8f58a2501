import type { DestinationCounts, OutboxStatsSource } from '../core/stats/outbox-stats.port';
import { statsStatement, type StatsDialect } from './dialects/outbox-stats.sql';
import type { SqlStatement } from './dialects/outbox-sql.dialect';
import type { SqlRunner } from './sql-runners';

/** Stats of an outbox table, read with one statement outside application transactions. */
export class SqlOutboxStatsSource implements OutboxStatsSource {
  private readonly statement: SqlStatement;

  constructor(
    dialect: StatsDialect,
    table: string,
    private readonly runner: SqlRunner,
  ) {
    this.statement = statsStatement(dialect, table);
  }

  async readCounts(): Promise<DestinationCounts[]> {
    return (await this.runner.rows(this.statement)).map(toCounts);
  }
}

// Drivers return SUM() as bigint text (pg), decimal text (mysql2) or numbers (SQLite).
function toCounts(row: Record<string, unknown>): DestinationCounts {
  const count = (value: unknown) => Number(value ?? 0);
  const ms = (value: unknown) => (value === null || value === undefined ? null : Math.max(0, Math.round(Number(value))));
  return {
    transport: String(row.transport),
    destination: String(row.destination),
    pending: count(row.pending),
    inFlight: count(row.inFlight),
    retrying: count(row.retrying),
    dead: count(row.dead),
    publishedLastMinute: count(row.publishedLastMinute),
    publishedLastHour: count(row.publishedLastHour),
    oldestPendingAgeMs: ms(row.oldestPendingAgeMs),
    lastPublishedAgoMs: ms(row.lastPublishedAgoMs),
  };
}
