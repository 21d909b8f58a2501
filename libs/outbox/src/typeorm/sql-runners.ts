import type { DataSource } from 'typeorm';
import type { SqlStatement } from '../core/sql-connection.port';
import type { SqlRunner } from '../core/sql-connection.port';
import { runNamed } from '../adapters/typeorm/prepared-statements';
import type { ConnectionTurns } from './sqlite/connection-turns';
import { connectionTurnsOf } from './sqlite/serialized-transactions';

export type { SqlRunner } from '../core/sql-connection.port';

/**
 * PostgreSQL and MariaDB: each statement on a pooled connection of its own, in autocommit. With
 * `prepared` (PostgreSQL), as a named statement: the relay runs the same few statements many times
 * a second, and the claim took longer to plan (0.7 ms) than to run (0.25 ms).
 */
export class PooledSqlRunner implements SqlRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly prepared = false,
  ) {}

  async rows({ sql, params }: SqlStatement): Promise<Record<string, unknown>[]> {
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      if (this.prepared) return await runNamed(queryRunner, sql, params);
      const result = await queryRunner.query(sql, params, true);
      return result.records ?? [];
    } finally {
      await queryRunner.release();
    }
  }
}

interface BetterSqliteDatabase {
  inTransaction: boolean;
  prepare(sql: string): { all(...params: unknown[]): Record<string, unknown>[] };
}

/**
 * SQLite through TypeORM has a single connection, shared with the application. A relay
 * statement issued while an application transaction is open would run inside it: it could
 * see rows that are later rolled back and publish them. So relay statements take their turn
 * between transactions (or, where the outbox module does not hand out turns, as in the CLI, wait
 * until the connection is between transactions) and then run synchronously, which nothing can
 * interleave.
 */
export class SharedConnectionSqlRunner implements SqlRunner {
  private readonly statements = new Map<string, ReturnType<BetterSqliteDatabase['prepare']>>();

  constructor(
    private readonly connection: () => BetterSqliteDatabase,
    private readonly turns: () => ConnectionTurns<object> | undefined = () => undefined,
    private readonly maxWaitMs = 5_000,
  ) {}

  async rows(statement: SqlStatement): Promise<Record<string, unknown>[]> {
    const turns = this.turns();
    if (!turns) return this.rowsBetweenTransactions(statement);
    const turn = {};
    await turns.take(turn);
    try {
      return this.run(this.connection(), statement);
    } finally {
      turns.give(turn);
    }
  }

  private async rowsBetweenTransactions(statement: SqlStatement): Promise<Record<string, unknown>[]> {
    const database = this.connection();
    const deadline = Date.now() + this.maxWaitMs;
    while (database.inTransaction) {
      if (Date.now() > deadline) {
        throw new Error(`SQLite connection stayed inside an application transaction for ${this.maxWaitMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return this.run(database, statement);
  }

  private run(database: BetterSqliteDatabase, { sql, params }: SqlStatement): Record<string, unknown>[] {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement.all(...params);
  }
}

/**
 * The way to run statements outside application transactions on this data source; `prepared`
 * names the statements on PostgreSQL (SQLite's are prepared anyway, MariaDB's never).
 */
export function runnerFor(dataSource: DataSource, { prepared = false }: { prepared?: boolean } = {}): SqlRunner {
  if (dataSource.options.type === 'better-sqlite3') {
    return new SharedConnectionSqlRunner(
      () => (dataSource.driver as unknown as { databaseConnection: BetterSqliteDatabase }).databaseConnection,
      () => connectionTurnsOf(dataSource),
    );
  }
  return new PooledSqlRunner(dataSource, prepared && dataSource.options.type === 'postgres');
}
