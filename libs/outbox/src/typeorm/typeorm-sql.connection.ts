import type { DataSource, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { SqlStatement } from '../core/sql-connection.port';
import type { ListenClient, SqlConnection, SqlResult, SqlRunner } from '../core/sql-connection.port';
import type { SqlDialectName } from '../core/sql-transaction.port';
import { sqlDialectOf } from '../adapters/typeorm/typeorm-dialect';
import { runnerFor } from './sql-runners';

/** A TypeORM data source as the library's `SqlConnection`: TypeORM becomes one data layer among the others. */
export class TypeOrmSqlConnection implements SqlConnection {
  readonly layer = 'typeorm';
  readonly dialect: SqlDialectName;

  constructor(private readonly dataSource: DataSource) {
    this.dialect = sqlDialectOf(dataSource.options.type);
  }

  runner(options: { prepared?: boolean } = {}): SqlRunner {
    return runnerFor(this.dataSource, options);
  }

  run(statement: SqlStatement): Promise<SqlResult> {
    return this.withQueryRunner((queryRunner) => query(queryRunner, statement));
  }

  transaction<T>(work: (run: (statement: SqlStatement) => Promise<SqlResult>) => Promise<T>): Promise<T> {
    return this.withQueryRunner(async (queryRunner) => {
      await queryRunner.startTransaction('READ COMMITTED');
      try {
        const result = await work((statement) => query(queryRunner, statement));
        await queryRunner.commitTransaction();
        return result;
      } catch (error) {
        await queryRunner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
    });
  }

  /** node-postgres' `max` of the data source's pool (10 unless configured). */
  get poolSize(): number | undefined {
    if (this.dialect !== 'postgres') return undefined;
    return this.pgPool()?.options?.max;
  }

  get connectionConfig(): Record<string, unknown> | undefined {
    return this.dialect === 'postgres' ? (this.pgPool()?.options ?? {}) : undefined;
  }

  async listenClient(): Promise<ListenClient> {
    const [client, release] = await (this.dataSource.driver as PostgresDriver).obtainMasterConnection();
    return { client: client as ListenClient['client'], release: (broken) => (release as (error?: boolean) => void)(broken ? true : undefined) };
  }

  private pgPool(): { options?: Record<string, unknown> & { max?: number } } | undefined {
    return (this.dataSource.driver as PostgresDriver).master as { options?: Record<string, unknown> & { max?: number } } | undefined;
  }

  private async withQueryRunner<T>(work: (queryRunner: QueryRunner) => Promise<T>): Promise<T> {
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      return await work(queryRunner);
    } finally {
      await queryRunner.release();
    }
  }
}

/** The connection of a data source, or the connection itself: the factories take either. */
export function sqlConnectionOf(source: DataSource | SqlConnection): SqlConnection {
  return isSqlConnection(source) ? source : new TypeOrmSqlConnection(source);
}

function isSqlConnection(value: DataSource | SqlConnection): value is SqlConnection {
  return typeof (value as Partial<SqlConnection>).runner === 'function' && typeof (value as Partial<SqlConnection>).dialect === 'string';
}

async function query(queryRunner: QueryRunner, { sql, params }: SqlStatement): Promise<SqlResult> {
  const result = await queryRunner.query(sql, params, true);
  return { records: result.records ?? [], affected: result.affected ?? 0 };
}
