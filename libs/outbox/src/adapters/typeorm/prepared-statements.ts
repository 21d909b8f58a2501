import type { QueryRunner } from 'typeorm';
import { preparedStatementName } from '../../sql/prepared-statement-name';
import { loadTypeOrm } from './typeorm.loader';

/** The part of node-postgres' client used here: a query config with a statement name. */
interface NamedQueryClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
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
