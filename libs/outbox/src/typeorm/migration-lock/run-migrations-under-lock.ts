import { resolve } from 'node:path';
import type { DataSource, Migration } from 'typeorm';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { MigrationLockTimeoutError } from './migration-lock.error';
import {
  dataSourceNotInitialized,
  invalidMigrationLockTimeout,
  invalidMysqlLockName,
  invalidPostgresLockKey,
  migrationLockTimedOut,
  migrationLockUnsupported,
  migrationsRunBeforeLock,
  waitingForMigrationLock,
} from './migration-lock.messages';
import { MIGRATION_LOCK_POSTGRES_KEY, resolveMigrationLockOptions, type MigrationLockOptions } from './migration-lock.options';
import type { MigrationLock } from './migration-lock.port';
import { MYSQL_LOCK_NAME_MAX, openMysqlMigrationLock } from './mysql-migration.lock';
import { openPostgresMigrationLock } from './postgres-migration.lock';
import { noMigrationLock, openSqliteMigrationLock } from './sqlite-migration.lock';

/**
 * Runs `dataSource.runMigrations()` under a lock that spans processes, so that any number of
 * instances can start together on an empty database: the first runs the migrations, the others wait
 * and then find nothing left to run. TypeORM itself takes no such lock (typeorm/typeorm#4588), and
 * two instances that both run `CREATE TABLE` fail on each other's table.
 *
 * PostgreSQL: `pg_advisory_lock(<postgresKey>)`; MariaDB/MySQL: `GET_LOCK(<mysqlLockName>)`; each on
 * a connection of its own from the data source's pool, held until the migrations are done.
 * better-sqlite3: an exclusive transaction on `<database>-migration-lock`. A process that dies
 * releases the lock with its session (or file handle). After `timeoutMs` (default 5 minutes) it
 * throws a `MigrationLockTimeoutError` naming the lock and its holder.
 *
 * The data source must be initialized with `migrationsRun: false`. Resolves what
 * `runMigrations()` resolves: the migrations this instance ran (none when another ran them).
 */
export async function runMigrationsUnderLock(dataSource: DataSource, options: MigrationLockOptions = {}): Promise<Migration[]> {
  if (!dataSource.isInitialized) throw new OutboxConfigurationError(dataSourceNotInitialized());
  if (dataSource.options.migrationsRun) throw new OutboxConfigurationError(migrationsRunBeforeLock());
  const settings = resolveMigrationLockOptions(options);
  checkOptions(settings);
  const lock = await openMigrationLock(dataSource, settings);
  try {
    if (!(await lock.tryAcquire())) {
      settings.logger.log(waitingForMigrationLock(lock.description, await lock.holder(), settings.timeoutMs));
      if (!(await lock.acquire(settings.timeoutMs))) {
        throw new MigrationLockTimeoutError(migrationLockTimedOut(lock.description, await lock.holder(), settings.timeoutMs, lock.findHolder));
      }
    }
    try {
      return await dataSource.runMigrations();
    } finally {
      await lock.release();
    }
  } finally {
    await lock.close();
  }
}

function openMigrationLock(dataSource: DataSource, settings: MigrationLockOptions): Promise<MigrationLock> | MigrationLock {
  const type = dataSource.options.type;
  if (type === 'postgres') return openPostgresMigrationLock(dataSource, String(settings.postgresKey ?? MIGRATION_LOCK_POSTGRES_KEY));
  if (type === 'mariadb' || type === 'mysql') return openMysqlMigrationLock(dataSource, settings.mysqlLockName);
  if (type === 'better-sqlite3') {
    const database = String(dataSource.options.database ?? '');
    // '' is a temporary database of the connection's own: like ':memory:', no other process sees it.
    if (database === ':memory:' || database === '') return noMigrationLock;
    return openSqliteMigrationLock(dataSource, settings.sqliteLockFile ?? `${resolve(database)}-migration-lock`);
  }
  throw new OutboxConfigurationError(migrationLockUnsupported(type));
}

function checkOptions({ timeoutMs, postgresKey, mysqlLockName }: MigrationLockOptions): void {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs! <= 0) throw new OutboxConfigurationError(invalidMigrationLockTimeout(timeoutMs));
  if (postgresKey !== undefined && !isInt64(postgresKey)) throw new OutboxConfigurationError(invalidPostgresLockKey(postgresKey));
  if (mysqlLockName !== undefined && (typeof mysqlLockName !== 'string' || mysqlLockName.length === 0 || mysqlLockName.length > MYSQL_LOCK_NAME_MAX)) {
    throw new OutboxConfigurationError(invalidMysqlLockName(mysqlLockName));
  }
}

function isInt64(key: bigint | string): boolean {
  if (typeof key === 'string' && !/^-?\d{1,19}$/.test(key)) return false;
  if (typeof key !== 'string' && typeof key !== 'bigint') return false;
  const value = BigInt(key);
  return BigInt.asIntN(64, value) === value;
}
