import type { EntityManager } from 'typeorm';
import { OutboxWriteError } from '../../core/outbox.errors';
import { addOutsideTransaction } from '../../core/outbox.messages';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import type { DataLayerAdapter, DataLayerOptions } from '../data-layer.port';
import { runNamed } from './prepared-statements';
import { preparedStatementName } from '../../sql/prepared-statement-name';
import { carryToCommit } from '../pg/commit-carrier';
import { sqlDialectOf } from './typeorm-dialect';

// By shape rather than instanceof: an app may load its own copy of typeorm.
export function isEntityManager(value: unknown): value is EntityManager {
  const candidate = value as Partial<EntityManager> | undefined;
  return typeof candidate?.transaction === 'function' && typeof candidate.query === 'function' && candidate.connection !== undefined;
}

/**
 * A TypeORM EntityManager inside a transaction (`dataSource.transaction(async (manager) => …)`, or the
 * manager of a save the subscriber captures) as the writer's `SqlTransaction`: its statements run on
 * the transaction's query runner, so the outbox's rows commit or roll back with the caller's data.
 * With `followed` (the module's subscriber feeds it) the transaction notifies the relays once rather
 * than with every INSERT, and its commit wakes this instance's relay.
 */
export function typeOrmTransaction(manager: EntityManager, { preparedStatements, writeWithCommit = true, followed }: DataLayerOptions): SqlTransaction {
  const queryRunner = manager.queryRunner;
  if (!queryRunner?.isTransactionActive) throw new OutboxWriteError(addOutsideTransaction());
  const dialect = sqlDialectOf(manager.connection.options.type);
  // TypeORM's query API takes no statement name: the named statement goes through the driver's client.
  const prepared = preparedStatements && dialect === 'postgres';
  return {
    dialect,
    layer: 'typeorm',
    // TypeORM calls the subscribers of one save concurrently: its writes queue on the query runner.
    owner: queryRunner,
    query: (sql, params) => manager.query(sql, [...params]),
    execute: async (sql, params) => {
      const result = prepared ? await runNamed(queryRunner, sql, [...params]) : await manager.query(sql, [...params]);
      // A commit after outbox statements wakes this instance's relay (see the subscriber's afterTransactionCommit).
      followed?.wrote(queryRunner);
      // MariaDB/MySQL: an INSERT's raw result is the driver's header, with the rows it changed.
      const affected = (result as { affectedRows?: unknown } | undefined)?.affectedRows;
      return typeof affected === 'number' ? affected : undefined;
    },
    // PostgreSQL through node-postgres: the statement goes out with the COMMIT (see adapters/pg/commit-carrier.ts).
    executeWithCommit:
      dialect === 'postgres' && writeWithCommit
        ? (sql, params) => {
            const client = (queryRunner as { databaseConnection?: object }).databaseConnection;
            const name = prepared ? preparedStatementName(sql) : undefined;
            if (!client || !carryToCommit(client, { text: sql, values: params, name })) return false;
            queryRunner.connection.logger.logQuery(sql, [...params], queryRunner);
            followed?.wrote(queryRunner);
            return true;
          }
        : undefined,
    notifications: followed && { needed: () => followed.needsNotification(queryRunner), sent: () => followed.notified(queryRunner) },
  };
}

/** TypeORM's entry in `DATA_LAYERS`: an EntityManager, in a transaction. */
export const typeOrmDataLayer: DataLayerAdapter = {
  listed: { as: 'a TypeORM EntityManager in a transaction', at: 1 },
  matches: isEntityManager,
  toSql: (value, options) => typeOrmTransaction(value as EntityManager, options),
};
