import type { EntityManager } from 'typeorm';
import { OutboxWriteError } from '../../core/outbox.errors';
import { addOutsideTransaction } from '../../core/outbox.messages';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import type { OutboxTransactionTracker } from '../../typeorm/outbox-transaction.tracker';
import { runNamed } from '../../typeorm/prepared-statements';
import { sqlDialectOf } from '../../typeorm/typeorm-sql.connection';

export interface TypeOrmTransactionOptions {
  /**
   * Follows the data source's transactions (the entity subscriber feeds it): the transaction then
   * notifies the relays once rather than with every INSERT, and its commit wakes this instance's relay.
   */
  tracker: OutboxTransactionTracker;
  /**
   * PostgreSQL: run the outbox's statements as named prepared statements, parsed and planned once per
   * connection rather than on every save. Default `true`; `false` behind a pooler that cannot keep them.
   */
  preparedStatements?: boolean;
}

/** Resolves an EntityManager to the `SqlTransaction` the writer writes through; made once per module. */
export type TypeOrmTransactionOf = (manager: EntityManager) => SqlTransaction;

/**
 * A TypeORM EntityManager inside a transaction (`dataSource.transaction(async (manager) => …)`, or the
 * manager of a save the subscriber captures) as the writer's `SqlTransaction`: its statements run on
 * the transaction's query runner, so the outbox's rows commit or roll back with the caller's data.
 */
export function typeOrmTransaction(manager: EntityManager, { tracker, preparedStatements = true }: TypeOrmTransactionOptions): SqlTransaction {
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
      tracker.wrote(queryRunner);
      // MariaDB/MySQL: an INSERT's raw result is the driver's header, with the rows it changed.
      const affected = (result as { affectedRows?: unknown } | undefined)?.affectedRows;
      return typeof affected === 'number' ? affected : undefined;
    },
    notifications: { needed: () => tracker.needsNotification(queryRunner), sent: () => tracker.notified(queryRunner) },
  };
}
