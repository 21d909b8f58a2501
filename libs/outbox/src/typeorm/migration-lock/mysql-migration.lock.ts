import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { mysqlLockFailed } from './migration-lock.messages';
import type { MigrationLock } from './migration-lock.port';

const PREFIX = 'outbox-migrations:';
/** MySQL refuses longer GET_LOCK names; MariaDB accepts them, but one default fits both. */
export const MYSQL_LOCK_NAME_MAX = 64;

/**
 * GET_LOCK on a connection of its own: the lock belongs to that session, which the server ends when
 * the process dies. GET_LOCK names are server-wide, hence the database's name in the default.
 */
export async function openMysqlMigrationLock(dataSource: DataSource, name: string | undefined): Promise<MigrationLock> {
  const runner = dataSource.createQueryRunner('master');
  await runner.connect();
  const [{ database }] = (await runner.query('SELECT DATABASE() AS `database`')) as Array<{ database: string | null }>;
  const lockName = name ?? defaultMysqlLockName(database ?? '');
  const getLock = async (seconds: number) => {
    const [{ acquired }] = (await runner.query('SELECT GET_LOCK(?, ?) AS acquired', [lockName, seconds])) as Array<{ acquired: number | string | null }>;
    if (acquired === null) throw new Error(mysqlLockFailed(lockName));
    return Number(acquired) === 1;
  };
  let closed = false;
  return {
    description: `MariaDB/MySQL GET_LOCK('${lockName}')`,
    findHolder: `"SELECT IS_USED_LOCK('${lockName}')" gives the connection that holds it, and "KILL <that id>" ends it`,
    tryAcquire: () => getLock(0),
    // GET_LOCK counts whole seconds: round up, so that it never gives up before timeoutMs.
    acquire: (timeoutMs) => getLock(Math.max(1, Math.ceil(timeoutMs / 1000))),
    holder: async () => {
      const rows = (await runner.query(
        'SELECT p.ID AS id, p.USER AS user, p.HOST AS host FROM information_schema.PROCESSLIST p WHERE p.ID = IS_USED_LOCK(?)',
        [lockName],
      )) as Array<{ id: number; user: string; host: string }>;
      return rows.map((row) => `connection ${row.id} (${row.user}@${row.host})`).join(', ') || undefined;
    },
    release: async () => {
      await runner.query('SELECT RELEASE_LOCK(?)', [lockName]);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await runner.release().catch(() => undefined);
    },
  };
}

/** `outbox-migrations:<database>`, or with a hash in place of a name too long for the limit. */
export function defaultMysqlLockName(database: string): string {
  const name = `${PREFIX}${database}`;
  if (name.length <= MYSQL_LOCK_NAME_MAX) return name;
  return `${PREFIX}${createHash('sha256').update(database).digest('hex').slice(0, MYSQL_LOCK_NAME_MAX - PREFIX.length)}`;
}
