import type { DataSource } from 'typeorm';
import type { OutboxStore } from '../core/outbox-store.port';
import type { OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import type { OutboxStatsSource } from '../core/stats/outbox-stats.port';
import type { OutboxConsoleStore } from '../core/console/outbox-console.port';
import * as sql from '../sql/outbox-sql.factory';
import type { SqlConnection } from '../core/sql-connection.port';
import { sqlConnectionOf } from './typeorm-sql.connection';
import { resolvePartitioning, type OutboxPartitioning } from '../core/partitioning/outbox-partitioning';
import type { OutboxPartitionStore } from '../core/partitioning/outbox-partitions.port';

// The stores live in sql/ and take any SqlConnection; these take a TypeORM data source too.
export { dialectFor, tableDialectFor, type OutboxTableArgument, type SqlOutboxStoreOptions } from '../sql/outbox-sql.factory';

/** The store for a data source (or any `SqlConnection`): its dialect, and a way to run statements outside application transactions. */
export function createSqlOutboxStore(source: DataSource | SqlConnection, table: sql.OutboxTableArgument, options: sql.SqlOutboxStoreOptions = {}): OutboxStore & { probe(): Promise<void> } {
  return sql.createSqlOutboxStore(sqlConnectionOf(source), table, options);
}

/** Operator and cleanup access to the outbox table of a data source (or any `SqlConnection`); `partitioning` as the table was made with. */
export function createSqlOutboxMaintenanceStore(source: DataSource | SqlConnection, table: sql.OutboxTableArgument, partitioning?: OutboxPartitioning): OutboxMaintenanceStore {
  return sql.createSqlOutboxMaintenanceStore(sqlConnectionOf(source), table, partitioning && resolvePartitioning(partitioning));
}

/** The time partitions of a partitioned outbox table (PostgreSQL): made ahead and dropped by cleanup runs. */
export function createSqlOutboxPartitionStore(source: DataSource | SqlConnection, table: sql.OutboxTableArgument, partitioning: OutboxPartitioning): OutboxPartitionStore {
  return sql.createSqlOutboxPartitionStore(sqlConnectionOf(source), table, resolvePartitioning(partitioning));
}

/** One-statement stats of the outbox table of a data source (or any `SqlConnection`). */
export function createSqlOutboxStatsSource(source: DataSource | SqlConnection, table: sql.OutboxTableArgument): OutboxStatsSource {
  return sql.createSqlOutboxStatsSource(sqlConnectionOf(source), table);
}

/** The operator console's store (PostgreSQL, SQLite, MariaDB/MySQL). */
export function createSqlOutboxConsoleStore(source: DataSource | SqlConnection, table: sql.OutboxTableArgument): OutboxConsoleStore {
  return sql.createSqlOutboxConsoleStore(sqlConnectionOf(source), table);
}
