import type { DataSource } from 'typeorm';
import type { RelayLogger } from '../core/outbox-relay';
import { ConnectionErrorLog, guardMysql2Pool, guardPgPool, type PoolEvents } from '../sql/connection-error.guard';

/** The driver fields that hold TypeORM's pools (PostgresDriver.master/slaves, MysqlDriver.pool/poolCluster). */
interface DriverPools {
  master?: unknown;
  slaves?: unknown[];
  pool?: unknown;
  poolCluster?: unknown;
}

/**
 * Guards the pools of the app's data source against connection errors that nobody listens to
 * (see connection-error.guard.ts): the relay borrows their connections all the time, so a database
 * restart meets one of them in the moment between the pool handing it out and TypeORM listening.
 * The data source is initialized by then (TypeORM's module creates it before the outbox's providers).
 */
export function guardTypeOrmPools(dataSource: DataSource, logger: Pick<RelayLogger, 'warn'>): void {
  const driver = dataSource.driver as unknown as DriverPools;
  const type = dataSource.options.type;
  if (type === 'postgres') {
    const log = new ConnectionErrorLog(logger, 'PostgreSQL (TypeORM pool)');
    for (const pool of [driver.master, ...(driver.slaves ?? [])]) if (isPool(pool)) guardPgPool(pool, log);
  } else if (type === 'mysql' || type === 'mariadb') {
    const log = new ConnectionErrorLog(logger, 'MariaDB/MySQL (TypeORM pool)');
    // A replication set-up's pool cluster keeps its pools private and forwards neither event: only a single pool is guarded.
    if (isPool(driver.pool)) guardMysql2Pool(driver.pool, log);
  }
}

function isPool(value: unknown): value is PoolEvents {
  return typeof (value as PoolEvents | undefined)?.on === 'function' && typeof (value as PoolEvents).listeners === 'function';
}
