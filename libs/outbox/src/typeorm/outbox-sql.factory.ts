import type { DataSource } from 'typeorm';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { unsupportedDatabase } from '../core/outbox.messages';
import { validateTableName } from '../core/outbox-options';
import type { DialectOptions, OutboxSqlDialect, OutboxTableDialect } from './dialects/outbox-sql.dialect';
import { MariaDbOutboxDialect } from './dialects/mariadb-outbox.dialect';
import { MariaDbOutboxStore } from './mariadb-outbox.store';
import type { OutboxStore } from '../core/outbox-store.port';
import type { OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import { PostgresMaintenanceSql, SqliteMaintenanceSql } from './dialects/outbox-maintenance.sql';
import { SqlOutboxMaintenanceStore } from './sql-outbox-maintenance.store';
import { PostgresOutboxDialect } from './dialects/postgres-outbox.dialect';
import { SqliteOutboxDialect } from './dialects/sqlite-outbox.dialect';
import { runnerFor } from './sql-runners';
import { SqlOutboxStore } from './sql-outbox.store';
import type { OutboxStatsSource } from '../core/stats/outbox-stats.port';
import { SqlOutboxStatsSource } from './sql-outbox-stats.source';
import type { OutboxConsoleStore } from '../core/console/outbox-console.port';
import { consoleUnsupportedDatabase } from '../core/console/console.messages';
import { ConsoleSql } from './console/console.sql';
import { SqlOutboxConsoleStore } from './console/sql-outbox-console.store';
import { MariaDbOutboxConsoleStore } from './console/mariadb-outbox-console.store';

/** What writers and migrations use: inserts, locks and DDL of the database family. */
export function tableDialectFor(driverType: string, tableName: string, options: DialectOptions = {}): OutboxTableDialect {
  // Exported: a table name from elsewhere goes into SQL text, so it is checked here too.
  validateTableName(tableName);
  if (driverType === 'mariadb' || driverType === 'mysql') return new MariaDbOutboxDialect(tableName, options);
  return dialectFor(driverType, tableName, options);
}

export function dialectFor(driverType: string, tableName: string, options: DialectOptions = {}): OutboxSqlDialect {
  validateTableName(tableName);
  switch (driverType) {
    case 'postgres':
      return new PostgresOutboxDialect(tableName, options);
    case 'better-sqlite3':
      return new SqliteOutboxDialect(tableName, options);
    default:
      throw new OutboxConfigurationError(unsupportedDatabase(driverType));
  }
}

/** The store for a data source: its dialect, and a way to run statements outside application transactions. */
export function createSqlOutboxStore(dataSource: DataSource, tableName: string, options: DialectOptions = {}): OutboxStore & { probe(): Promise<void> } {
  validateTableName(tableName);
  const type = dataSource.options.type;
  if (type === 'mariadb' || type === 'mysql') return new MariaDbOutboxStore(dataSource, new MariaDbOutboxDialect(tableName, options));
  return new SqlOutboxStore(dialectFor(dataSource.options.type, tableName, options), runnerFor(dataSource));
}

/** Operator and cleanup access to the outbox table of a data source. */
export function createSqlOutboxMaintenanceStore(dataSource: DataSource, tableName: string): OutboxMaintenanceStore {
  validateTableName(tableName);
  const type = dataSource.options.type;
  if (type === 'mariadb' || type === 'mysql') return new MariaDbOutboxStore(dataSource, new MariaDbOutboxDialect(tableName));
  const sql = dataSource.options.type === 'postgres' ? new PostgresMaintenanceSql(tableName) : new SqliteMaintenanceSql(tableName);
  return new SqlOutboxMaintenanceStore(sql, runnerFor(dataSource));
}

/** One-statement stats of the outbox table of a data source. */
export function createSqlOutboxStatsSource(dataSource: DataSource, tableName: string): OutboxStatsSource {
  validateTableName(tableName);
  const type = dataSource.options.type;
  const dialect = type === 'mariadb' || type === 'mysql' ? 'mariadb' : type === 'postgres' ? 'postgres' : type === 'better-sqlite3' ? 'sqlite' : undefined;
  if (!dialect) throw new OutboxConfigurationError(unsupportedDatabase(type));
  return new SqlOutboxStatsSource(dialect, tableName, runnerFor(dataSource));
}

/** The operator console's store (PostgreSQL, SQLite, MariaDB/MySQL). */
export function createSqlOutboxConsoleStore(dataSource: DataSource, tableName: string): OutboxConsoleStore {
  validateTableName(tableName);
  const type = dataSource.options.type;
  if (type === 'mariadb' || type === 'mysql') return new MariaDbOutboxConsoleStore(new ConsoleSql('mariadb', tableName), dataSource);
  if (type !== 'postgres' && type !== 'better-sqlite3') throw new OutboxConfigurationError(consoleUnsupportedDatabase(type));
  return new SqlOutboxConsoleStore(new ConsoleSql(type === 'postgres' ? 'postgres' : 'sqlite', tableName), runnerFor(dataSource));
}
