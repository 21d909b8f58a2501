import type { DataSource, QueryRunner } from 'typeorm';
import type { MigrationLock } from './migration-lock.port';

/**
 * A session advisory lock on a connection of its own (not the one the migrations run on, which
 * TypeORM takes from the pool and gives back between steps). Advisory locks belong to one database;
 * the server drops the lock when the session ends, a crash of the process included.
 */
export async function openPostgresMigrationLock(dataSource: DataSource, key: string): Promise<MigrationLock> {
  const runner = dataSource.createQueryRunner('master');
  await runner.connect();
  const [{ database }] = (await runner.query('SELECT current_database() AS database')) as Array<{ database: string }>;
  // pg_locks shows a bigint key as two 32-bit halves.
  const unsigned = BigInt.asUintN(64, BigInt(key));
  const [classid, objid] = [String(unsigned >> 32n), String(unsigned & 0xffffffffn)];
  const lockedBy = `locktype = 'advisory' AND classid = ${classid} AND objid = ${objid} AND objsubid = 1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
  let closed = false;
  return {
    description: `PostgreSQL advisory lock ${key} in database "${database}"`,
    findHolder: `"SELECT pid FROM pg_locks WHERE ${lockedBy} AND granted", run in database "${database}", gives the session that holds it, and "SELECT pg_terminate_backend(<that pid>)" ends it`,
    tryAcquire: async () => {
      const [{ acquired }] = (await runner.query('SELECT pg_try_advisory_lock($1::bigint) AS acquired', [key])) as Array<{ acquired: boolean }>;
      return acquired;
    },
    acquire: async (timeoutMs) => {
      // lock_timeout bounds the wait for any lock, advisory ones included; the session is ours alone.
      await runner.query(`SET lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
      try {
        await runner.query('SELECT pg_advisory_lock($1::bigint)', [key]);
        return true;
      } catch (error) {
        if (sqlState(error) === '55P03') return false;
        throw error;
      } finally {
        await runner.query('RESET lock_timeout');
      }
    },
    holder: async () => {
      const rows = (await runner.query(
        `SELECT a.pid, a.application_name, a.client_addr, a.backend_start FROM pg_stat_activity a
          WHERE a.pid IN (SELECT pid FROM pg_locks WHERE ${lockedBy} AND granted)`,
      )) as Array<{ pid: number; application_name: string; client_addr: string | null; backend_start: Date }>;
      return rows.map(describeBackend).join(', ') || undefined;
    },
    release: async () => {
      await runner.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await release(runner);
    },
  };
}

function describeBackend(row: { pid: number; application_name: string; client_addr: string | null; backend_start: Date }): string {
  const application = row.application_name ? ` "${row.application_name}"` : '';
  return `backend pid ${row.pid}${application} from ${row.client_addr ?? 'a local socket'}, connected at ${new Date(row.backend_start).toISOString()}`;
}

function sqlState(error: unknown): string | undefined {
  const failed = error as { code?: string; driverError?: { code?: string } };
  return failed.driverError?.code ?? failed.code;
}

/** A broken connection has lost the lock with its session already: nothing is left to give back. */
async function release(runner: QueryRunner): Promise<void> {
  await runner.release().catch(() => undefined);
}
