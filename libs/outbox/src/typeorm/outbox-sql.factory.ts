import type { DataSource } from 'typeorm';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { unsupportedDatabase } from '../core/outbox.messages';
import type { OutboxSqlDialect } from './dialects/outbox-sql.dialect';
import { PostgresOutboxDialect } from './dialects/postgres-outbox.dialect';
import { SqliteOutboxDialect } from './dialects/sqlite-outbox.dialect';
import { PooledSqlRunner, SharedConnectionSqlRunner, type SqlRunner } from './sql-runners';
import { SqlOutboxStore } from './sql-outbox.store';

/** `notifyChannel`: PostgreSQL only; inserts also NOTIFY it (see PostgresNotificationListener). */
export function dialectFor(driverType: string, tableName: string, notifyChannel?: string): OutboxSqlDialect {
  switch (driverType) {
    case 'postgres':
      return new PostgresOutboxDialect(tableName, notifyChannel);
    case 'better-sqlite3':
      return new SqliteOutboxDialect(tableName);
    default:
      throw new OutboxConfigurationError(unsupportedDatabase(driverType));
  }
}

/** The store for a data source: its dialect, and a way to run statements outside application transactions. */
export function createSqlOutboxStore(dataSource: DataSource, tableName: string): SqlOutboxStore {
  const type = dataSource.options.type;
  const runner: SqlRunner =
    type === 'better-sqlite3'
      ? new SharedConnectionSqlRunner(() => (dataSource.driver as unknown as { databaseConnection: never }).databaseConnection)
      : new PooledSqlRunner(dataSource);
  return new SqlOutboxStore(dialectFor(type, tableName), runner);
}
