import { OutboxConfigurationError } from '../core/outbox.errors';
import { unsupportedDatabase } from '../core/outbox.messages';
import type { DialectOptions, OutboxSqlDialect, OutboxTableDialect } from './dialects/outbox-sql.dialect';
import { MariaDbOutboxDialect } from './dialects/mariadb-outbox.dialect';
import { MariaDbOutboxStore } from './mariadb-outbox.store';
import type { OutboxStore } from '../core/outbox-store.port';
import type { OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import { PostgresMaintenanceSql, SqliteMaintenanceSql } from './dialects/outbox-maintenance.sql';
import { SqlOutboxMaintenanceStore } from './sql-outbox-maintenance.store';
import { PostgresOutboxDialect } from './dialects/postgres-outbox.dialect';
import { SqliteOutboxDialect } from './dialects/sqlite-outbox.dialect';
import { driverTypeOf, type SqlConnection, type SqlRunner } from '../core/sql-connection.port';
import { SqlOutboxStore } from './sql-outbox.store';
import { PlannerStatistics } from './planner-statistics';
import type { OutboxStatsSource } from '../core/stats/outbox-stats.port';
import { SqlOutboxStatsSource } from './sql-outbox-stats.source';
import type { OutboxConsoleStore } from '../core/console/outbox-console.port';
import { consoleUnsupportedDatabase } from '../core/console/console.messages';
import { ConsoleSql } from './console/console.sql';
import { StreamedCounts } from './streamed-counts';
import { SqlOutboxConsoleStore } from './console/sql-outbox-console.store';
import { MariaDbOutboxConsoleStore } from './console/mariadb-outbox-console.store';
import { OutboxTable, type OutboxTableLocation } from './dialects/outbox-table';
import { partitioningNeedsPostgres } from '../core/partitioning/partitioning.messages';
import type { ResolvedPartitioning } from '../core/partitioning/outbox-partitioning';
import type { OutboxPartitionStore } from '../core/partitioning/outbox-partitions.port';
import { SqlOutboxPartitionStore } from './partitions/sql-outbox-partitions.store';
import type { ReplayStore } from '../core/replay/replay.port';
import { ReplaySql } from './replay/replay.sql';
import { MariaDbReplayStore, SqlReplayStore } from './replay/sql-replay.store';

/**
 * Every entry point below takes the table as a name (`'outbox_messages'`) or a location
 * (`{ tableName, schema }`). Both go into SQL text, so they are validated here, and a schema is
 * refused where the database has none to offer, before any statement is built.
 */
export type OutboxTableArgument = string | OutboxTableLocation | OutboxTable;

/** What writers and migrations use: inserts, locks and DDL of the database family. */
export function tableDialectFor(driverType: string, table: OutboxTableArgument, options: DialectOptions = {}): OutboxTableDialect {
  const located = OutboxTable.on(driverType, table);
  if (options.partitioning !== undefined && driverType !== 'postgres') throw new OutboxConfigurationError(partitioningNeedsPostgres(driverType));
  if (isMariaDb(driverType)) return new MariaDbOutboxDialect(located, options);
  return dialectFor(driverType, located, options);
}

export function dialectFor(driverType: string, table: OutboxTableArgument, options: DialectOptions = {}): OutboxSqlDialect {
  const located = OutboxTable.on(driverType, table);
  switch (driverType) {
    case 'postgres':
      return new PostgresOutboxDialect(located, options);
    case 'better-sqlite3':
      return new SqliteOutboxDialect(located, options);
    default:
      throw new OutboxConfigurationError(unsupportedDatabase(driverType));
  }
}

export interface SqlOutboxStoreOptions extends DialectOptions {
  /**
   * PostgreSQL: run the claim and the settles as named prepared statements, parsed and planned once
   * per connection. Default `true`; `false` behind a pooler that cannot keep prepared statements.
   */
  preparedStatements?: boolean;
  /** Where the store says what it cannot do (PostgreSQL: refresh the table's statistics, see PlannerStatistics). Default: nowhere. */
  log?: (message: string) => void;
}

/** The store for a connection: its dialect, and a way to run statements outside application transactions. */
export function createSqlOutboxStore(connection: SqlConnection, table: OutboxTableArgument, options: SqlOutboxStoreOptions = {}): OutboxStore & { probe(): Promise<void> } {
  const type = driverTypeOf(connection.dialect);
  const located = OutboxTable.on(type, table);
  const { preparedStatements = true, log, ...dialectOptions } = options;
  if (isMariaDb(type)) return new MariaDbOutboxStore(connection, new MariaDbOutboxDialect(located, dialectOptions));
  const statistics = type === 'postgres' ? new PlannerStatistics(connection.runner(), located, log) : undefined;
  return new SqlOutboxStore(dialectFor(type, located, dialectOptions), connection.runner({ prepared: preparedStatements && type === 'postgres' }), statistics);
}

/**
 * Operator and cleanup access to the outbox table of a connection. With `partitioning` (PostgreSQL),
 * the row cleanup leaves the rows that partition drops will take.
 */
export function createSqlOutboxMaintenanceStore(connection: SqlConnection, table: OutboxTableArgument, partitioning?: ResolvedPartitioning): OutboxMaintenanceStore {
  const type = driverTypeOf(connection.dialect);
  const located = OutboxTable.on(type, table);
  if (partitioning !== undefined && type !== 'postgres') throw new OutboxConfigurationError(partitioningNeedsPostgres(type));
  if (isMariaDb(type)) return new MariaDbOutboxStore(connection, new MariaDbOutboxDialect(located));
  const sql = type === 'postgres' ? new PostgresMaintenanceSql(located, partitioning) : new SqliteMaintenanceSql(located);
  return new SqlOutboxMaintenanceStore(sql, connection.runner());
}

/** One-statement stats of the outbox table of a connection. */
export function createSqlOutboxStatsSource(connection: SqlConnection, table: OutboxTableArgument): OutboxStatsSource {
  const type = driverTypeOf(connection.dialect);
  const located = OutboxTable.on(type, table);
  const dialect = isMariaDb(type) ? 'mariadb' : type === 'postgres' ? 'postgres' : type === 'better-sqlite3' ? 'sqlite' : undefined;
  if (!dialect) throw new OutboxConfigurationError(unsupportedDatabase(type));
  return new SqlOutboxStatsSource(dialect, located, connection.runner());
}

/** The operator console's store (PostgreSQL, SQLite, MariaDB/MySQL). */
export function createSqlOutboxConsoleStore(connection: SqlConnection, table: OutboxTableArgument): OutboxConsoleStore {
  return operatorStore(connection, table, {
    mariadb: (located) => new MariaDbOutboxConsoleStore(new ConsoleSql('mariadb', located), connection),
    sql: (dialect, located, runner, counts) => new SqlOutboxConsoleStore(new ConsoleSql(dialect, located), runner, counts),
  });
}

/** The replay's store (PostgreSQL, SQLite, MariaDB/MySQL): published rows made pending again. */
export function createSqlReplayStore(connection: SqlConnection, table: OutboxTableArgument): ReplayStore {
  return operatorStore(connection, table, {
    mariadb: (located) => new MariaDbReplayStore(new ReplaySql('mariadb', located), connection),
    sql: (dialect, located, runner, counts) => new SqlReplayStore(new ReplaySql(dialect, located), runner, counts),
  });
}

/**
 * An operator's store on the connection's database. MariaDB's runs its statements its own way; on
 * PostgreSQL it also counts the rows the WAL stream holds (they are in no pending count).
 */
function operatorStore<T>(
  connection: SqlConnection,
  table: OutboxTableArgument,
  make: {
    mariadb: (located: OutboxTable) => T;
    sql: (dialect: 'postgres' | 'sqlite', located: OutboxTable, runner: SqlRunner, streamed?: StreamedCounts) => T;
  },
): T {
  const type = driverTypeOf(connection.dialect);
  const located = OutboxTable.on(type, table);
  if (isMariaDb(type)) return make.mariadb(located);
  if (type !== 'postgres' && type !== 'better-sqlite3') throw new OutboxConfigurationError(consoleUnsupportedDatabase(type));
  const runner = connection.runner();
  if (type === 'postgres') return make.sql('postgres', located, runner, new StreamedCounts(located, runner));
  return make.sql('sqlite', located, runner);
}

function isMariaDb(driverType: string): boolean {
  return driverType === 'mariadb' || driverType === 'mysql';
}

/** The time partitions of a partitioned outbox table (PostgreSQL only). */
export function createSqlOutboxPartitionStore(connection: SqlConnection, table: OutboxTableArgument, partitioning: ResolvedPartitioning): OutboxPartitionStore {
  const type = driverTypeOf(connection.dialect);
  // Names first, as everywhere: they go into SQL text.
  const located = OutboxTable.of(table);
  if (type !== 'postgres') throw new OutboxConfigurationError(partitioningNeedsPostgres(type));
  return new SqlOutboxPartitionStore(connection, located, partitioning);
}
