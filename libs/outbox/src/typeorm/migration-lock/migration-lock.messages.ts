// Error and log texts of runMigrationsUnderLock.

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

export const waitingForMigrationLock = (description: string, holder: string | undefined, timeoutMs: number) =>
  `Waiting up to ${seconds(timeoutMs)} for the migration lock (${description})${heldBy(holder)}: another instance is running its migrations; this one runs what is left when it is done.`;

export const migrationLockTimedOut = (description: string, holder: string | undefined, timeoutMs: number, findHolder: string) =>
  `Gave up after ${seconds(timeoutMs)} waiting for the migration lock (${description})${heldBy(holder)}. ` +
  `Another instance is running its migrations, or a session that took the lock has not let go of it. ` +
  `If a migration is still running (a long one on a big table), raise "timeoutMs" of runMigrationsUnderLock (now ${timeoutMs}). ` +
  `If none is: ${findHolder}, and end it; a process that dies lets go of the lock by itself.`;

export const migrationLockUnsupported = (type: string) =>
  `runMigrationsUnderLock has no migration lock for TypeORM's "${type}" driver: it supports "postgres", "mariadb", "mysql" and "better-sqlite3". ` +
  `Run the migrations of such a database from one place (a deployment step: "typeorm migration:run") before the instances start.`;

export const migrationsRunBeforeLock = () =>
  `runMigrationsUnderLock: the DataSource has "migrationsRun: true", so initialize() ran the migrations already, without the lock, and concurrent starts can fail on each other's tables. ` +
  `Set "migrationsRun: false" and let runMigrationsUnderLock run them (docs/migrations.md).`;

export const dataSourceNotInitialized = () =>
  `runMigrationsUnderLock needs an initialized DataSource: call "await dataSource.initialize()" first (with "migrationsRun: false").`;

export const invalidMigrationLockTimeout = (value: unknown) =>
  `runMigrationsUnderLock: "timeoutMs" ${String(value)} must be a positive whole number of milliseconds.`;

export const invalidPostgresLockKey = (value: unknown) =>
  `runMigrationsUnderLock: "postgresKey" ${String(value)} must be a whole number between -9223372036854775808 and 9223372036854775807 (a bigint, or a string of digits).`;

export const invalidMysqlLockName = (value: unknown) =>
  `runMigrationsUnderLock: "mysqlLockName" "${String(value)}" must be 1 to 64 characters (MariaDB/MySQL's limit for GET_LOCK names).`;

export const mysqlLockFailed = (name: string) =>
  `GET_LOCK('${name}') returned NULL: the server could not take the migration lock (the session was killed, or it ran out of memory). See the server's error log.`;

function heldBy(holder: string | undefined): string {
  return holder ? `, held by ${holder}` : '';
}
