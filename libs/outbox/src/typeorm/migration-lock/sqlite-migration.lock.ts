import { setTimeout as delay } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { MigrationLock } from './migration-lock.port';

/** The part of a better-sqlite3 `Database` used here. */
interface LockDatabase {
  exec(sql: string): unknown;
  close(): unknown;
}
type LockDatabaseClass = new (file: string, options: { timeout: number }) => LockDatabase;

/** Between two tries while another process holds the lock; SQLite's own busy handler waits alike. */
const RETRY_MS = 50;

/**
 * An exclusive transaction on a small database file of its own, beside the app's: SQLite's file
 * lock, which the operating system drops when the process dies. Not the app's database itself, so
 * the lock neither blocks its readers nor depends on its journal mode. better-sqlite3 waits
 * synchronously, so the wait is a loop of tries that leaves the event loop free.
 */
export function openSqliteMigrationLock(dataSource: DataSource, lockFile: string): MigrationLock {
  // TypeORM's driver holds the better-sqlite3 it loaded (or the one given as `driver`).
  const Database = (dataSource.driver as unknown as { sqlite: LockDatabaseClass }).sqlite;
  let db: LockDatabase | undefined;
  const tryAcquire = async () => {
    db ??= new Database(lockFile, { timeout: 0 });
    try {
      db.exec('BEGIN EXCLUSIVE');
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
      throw error;
    }
  };
  return {
    description: `an exclusive transaction on the SQLite file "${lockFile}"`,
    findHolder: `"fuser ${lockFile}" (or lsof) names the process that has it open`,
    tryAcquire,
    acquire: async (timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (await tryAcquire()) return true;
        const left = deadline - Date.now();
        if (left <= 0) return false;
        await delay(Math.min(RETRY_MS, left));
      }
    },
    holder: async () => undefined,
    release: async () => {
      db?.exec('ROLLBACK');
    },
    close: async () => {
      db?.close();
      db = undefined;
    },
  };
}

/** What an in-memory (or temporary) database needs: nothing, no other process can reach it. */
export const noMigrationLock: MigrationLock = {
  description: 'none (an in-memory database)',
  findHolder: '',
  tryAcquire: async () => true,
  acquire: async () => true,
  holder: async () => undefined,
  release: async () => undefined,
  close: async () => undefined,
};
