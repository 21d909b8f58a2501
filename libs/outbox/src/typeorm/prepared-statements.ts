import type { EntityManager, QueryRunner } from 'typeorm';
import { preparedStatementName } from '../sql/prepared-statement-name';
import { loadTypeOrm } from './typeorm.loader';

/** The part of node-postgres' client used here: a query config with a statement name. */
interface NamedQueryClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/** Whether `manager` can run a named statement: PostgreSQL, inside a transaction of its own query runner. */
export function canRunPrepared(manager: EntityManager): boolean {
  return manager.connection.options.type === 'postgres' && manager.queryRunner?.isTransactionActive === true;
}

/**
 * Runs the outbox INSERT as a named prepared statement on the transaction's own connection, so that
 * PostgreSQL parses and plans it once per connection rather than on every save.
 */
export async function runPrepared(manager: EntityManager, sql: string, params: unknown[]): Promise<void> {
  await runNamed(manager.queryRunner!, sql, params);
}

/**
 * Runs a statement as a named prepared statement on the query runner's connection and returns its
 * rows. TypeORM's query API takes no statement name, hence the driver's client; TypeORM's logger
 * still sees the statement, and a failure is the QueryFailedError that `query()` would throw.
 */
export async function runNamed(queryRunner: QueryRunner, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const logger = queryRunner.connection.logger;
  const client = (await queryRunner.connect()) as NamedQueryClient;
  logger.logQuery(sql, params, queryRunner);
  try {
    return (await client.query({ name: preparedStatementName(sql), text: sql, values: params })).rows;
  } catch (error) {
    logger.logQueryError(error as Error, sql, params, queryRunner);
    const { QueryFailedError } = loadTypeOrm('A prepared statement on a TypeORM query runner');
    throw new QueryFailedError(sql, params, error as Error);
  }
}
