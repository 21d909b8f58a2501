import type { DataSource, EntityManager } from 'typeorm';
import { waitUntil } from '../../libs/outbox/src/testing/contracts/contract-runner';

/** What tests need to see a transaction wait for a lock, on each server database. */
export interface LockWaits {
  /** The server's id of the connection `manager` runs on. */
  connectionId(manager: EntityManager): Promise<number>;
  /** True while connection `id` waits for a lock (PostgreSQL: any lock; MariaDB: an InnoDB row lock). */
  isWaiting(dataSource: DataSource, id: number): Promise<boolean>;
  /** True while some transaction waits for a lock in a statement that names `table`. */
  someoneWaitsOn(dataSource: DataSource, table: string): Promise<boolean>;
  /** How often to ask: InnoDB refreshes its INNODB_TRX snapshot only after 0.1 s without a read, so faster polling reads the same stale rows forever. */
  pollMs: number;
}

/** Polls `probe` at the database's pace until it holds, or fails after `timeoutMs` naming `what`. */
export function waitForLockWait(locks: LockWaits, what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<true> {
  return waitUntil(what, probe, timeoutMs, locks.pollMs);
}

export const POSTGRES_LOCK_WAITS: LockWaits = {
  connectionId: async (manager) => (await manager.query('SELECT pg_backend_pid() AS id'))[0].id,
  isWaiting: async (dataSource, id) => (await dataSource.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [id])).length > 0,
  someoneWaitsOn: async (dataSource, table) =>
    (await dataSource.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%${table}%`])).length > 0,
  pollMs: 25,
};

/** InnoDB tells its lock waits in INNODB_TRX: the outbox's commit-order locks are row locks of `<table>_locks`. */
export const MARIADB_LOCK_WAITS: LockWaits = {
  connectionId: async (manager) => Number((await manager.query('SELECT CONNECTION_ID() AS id'))[0].id),
  isWaiting: async (dataSource, id) =>
    (await dataSource.query(`SELECT 1 FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'`, [id])).length > 0,
  someoneWaitsOn: async (dataSource, table) =>
    (await dataSource.query(`SELECT 1 FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?`, [`%${table}%`])).length > 0,
  pollMs: 150,
};
