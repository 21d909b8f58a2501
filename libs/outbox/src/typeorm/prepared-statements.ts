import { createHash } from 'node:crypto';
import { QueryFailedError, type EntityManager, type QueryRunner } from 'typeorm';

/** The part of node-postgres' client used here: a query config with a statement name. */
interface NamedQueryClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * The name of a statement, from its text: node-postgres prepares a name once per connection and
 * refuses the same name with another text, and the outbox INSERT's text varies with its row count
 * and whether it carries the NOTIFY.
 */
export function preparedStatementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `nest_outbox_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

// Hashed once per text, not on every save. The texts are few: the relay's statements per table, and
// one outbox INSERT per row count (up to the writer's rows per INSERT), with or without the NOTIFY
// and the lock step.
const names = new Map<string, string>();

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
    throw new QueryFailedError(sql, params, error as Error);
  }
}
