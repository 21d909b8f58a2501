import type { DataSource } from 'typeorm';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { unsupportedDatabase } from '../core/outbox.messages';
import type { DialectOptions, OutboxSqlDialect } from './dialects/outbox-sql.dialect';
import { PostgresOutboxDialect } from './dialects/postgres-outbox.dialect';
import { SqliteOutboxDialect } from './dialects/sqlite-outbox.dialect';
import { runnerFor } from './sql-runners';
import { SqlOutboxStore } from './sql-outbox.store';

export function dialectFor(driverType: string, tableName: string, options: DialectOptions = {}): OutboxSqlDialect {
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
export function createSqlOutboxStore(dataSource: DataSource, tableName: string, options: DialectOptions = {}): SqlOutboxStore {
  return new SqlOutboxStore(dialectFor(dataSource.options.type, tableName, options), runnerFor(dataSource));
}
