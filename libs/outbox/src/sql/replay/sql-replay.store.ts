import type { ReplayFilter, ReplayHold, ReplayStore } from '../../core/replay/replay.port';
import type { SqlConnection, SqlRunner } from '../../core/sql-connection.port';
import type { StreamedCounts } from '../streamed-counts';
import type { ReplaySql } from './replay.sql';

/** The replay's store on PostgreSQL and SQLite: each batch is one statement that returns the rows it changed. */
export class SqlReplayStore implements ReplayStore {
  constructor(
    protected readonly sql: ReplaySql,
    protected readonly runner: SqlRunner,
    /** PostgreSQL: the WAL mode's counts, whose presence says the table is streamed. */
    private readonly streamed?: StreamedCounts,
  ) {}

  async countPublished(filter: ReplayFilter): Promise<number> {
    return this.count(this.runner, this.sql.countPublished(filter));
  }

  async countHeld(owner: string): Promise<number> {
    return this.count(this.runner, this.sql.countHeld(owner));
  }

  async statusOf(id: string): Promise<string | undefined> {
    const [row] = await this.runner.rows(this.sql.statusOf(id));
    return row === undefined ? undefined : String(row.status);
  }

  async holdBatch(filter: ReplayFilter, hold: ReplayHold, after: string, limit: number): Promise<string[]> {
    return positionsOf(await this.runner.rows(this.sql.holdBatch(filter, hold, after, limit)));
  }

  async releaseBatch(owner: string, after: string, limit: number): Promise<string[]> {
    return positionsOf(await this.runner.rows(this.sql.releaseBatch(owner, after, limit)));
  }

  async streamedMessagesExist(): Promise<boolean> {
    return this.streamed !== undefined && (await this.streamed.exist());
  }

  private async count(runner: SqlRunner, statement: ReturnType<ReplaySql['countHeld']>): Promise<number> {
    const [row] = await runner.rows(statement);
    return Number(row?.count ?? 0);
  }
}

/**
 * MariaDB / MySQL: an UPDATE returns no rows there, and may not read its own table in a sub-select,
 * so a batch locks its rows first (FOR UPDATE SKIP LOCKED) and then changes exactly those, in one
 * transaction.
 */
export class MariaDbReplayStore extends SqlReplayStore {
  constructor(
    sql: ReplaySql,
    private readonly connection: SqlConnection,
  ) {
    super(sql, connection.runner());
  }

  override holdBatch(filter: ReplayFilter, hold: ReplayHold, after: string, limit: number): Promise<string[]> {
    return this.connection.transaction(async (run) => {
      const positions = positionsOf((await run(this.sql.lockPublished(filter, after, limit))).records);
      if (positions.length > 0) await run(this.sql.holdPositions(hold, positions));
      return positions;
    });
  }

  override releaseBatch(owner: string, after: string, limit: number): Promise<string[]> {
    return this.connection.transaction(async (run) => {
      const positions = positionsOf((await run(this.sql.lockHeld(owner, after, limit))).records);
      if (positions.length > 0) await run(this.sql.releasePositions(owner, positions));
      return positions;
    });
  }
}

function positionsOf(rows: Record<string, unknown>[]): string[] {
  return rows.map((row) => String(row.position));
}
