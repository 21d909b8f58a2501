/** What `runMigrationsUnderLock` reports while it waits; Nest's `Logger` and `console` fit. */
export interface MigrationLockLogger {
  log(message: string): unknown;
}

export interface MigrationLockOptions {
  /**
   * How long to wait for the lock while another instance runs its migrations, in milliseconds; then
   * the start fails with a `MigrationLockTimeoutError` that names the lock. Set it above your longest
   * migration. Default 300000 (5 minutes).
   */
  timeoutMs?: number;
  /**
   * PostgreSQL: the key of the session advisory lock (`pg_advisory_lock(bigint)`), as a bigint or a
   * string of digits. Advisory locks belong to one database, so apps on different databases never
   * wait for each other. Default `8031453476610927975` (`MIGRATION_LOCK_POSTGRES_KEY`, the ASCII bytes
   * of "outboxmg").
   */
  postgresKey?: bigint | string;
  /**
   * MariaDB/MySQL: the name given to `GET_LOCK(name, timeout)`, at most 64 characters. Such names
   * are server-wide, so the default holds the database's name. Default `outbox-migrations:<database>`
   * (cut to 64 characters with a hash of the name when longer).
   */
  mysqlLockName?: string;
  /**
   * SQLite (better-sqlite3): the file whose exclusive transaction is the lock; the operating system
   * drops it when the process dies. Default `<database file>-migration-lock`, beside the database.
   * An in-memory database needs no lock.
   */
  sqliteLockFile?: string;
  /**
   * Where the wait is reported (once, when another instance holds the lock), e.g. Nest's
   * `new Logger('Migrations')`. Default `console`.
   */
  logger?: MigrationLockLogger;
}

/** The ASCII bytes of "outboxmg" as one signed 64-bit number: any fixed key would do, this one is recognisable. */
export const MIGRATION_LOCK_POSTGRES_KEY = '8031453476610927975';

export const DEFAULT_MIGRATION_LOCK_TIMEOUT_MS = 300_000;

/** The one place the defaults are applied. */
export function resolveMigrationLockOptions(options: MigrationLockOptions): Required<Pick<MigrationLockOptions, 'timeoutMs' | 'logger'>> & MigrationLockOptions {
  return { ...options, timeoutMs: options.timeoutMs ?? DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, logger: options.logger ?? console };
}
