import { existsSync } from 'node:fs';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import type { RelayLogger } from '../../core/outbox-relay';
import { ConnectionErrorLog, guardMysql2Pool, guardPgPool, type PoolEvents } from '../../sql/connection-error.guard';
import type { SqlConnection } from '../../core/sql-connection.port';
import { BetterSqliteConnection, type BetterSqliteLike } from '../better-sqlite3/better-sqlite3.connection';
import { loadDataLayer } from '../load-data-layer';
import { Mysql2PoolConnection, type Mysql2PoolLike } from '../mysql2/mysql2-pool.connection';
import { PgPoolConnection, type PgPoolLike } from '../pg/pg-pool.connection';
import { connectionNoSqliteFile, missingConnectionPackage } from './connection.messages';
import type { ConnectionTarget } from './outbox-connection.options';
import type { StatementTimeout } from './statement-timeout';

/** A connection and how to close what the module opened (a pool given by the app stays open). */
export interface OpenedConnection {
  readonly connection: SqlConnection;
  close(): Promise<void>;
}

export interface OpenConnectionOptions {
  connectTimeoutMs?: number;
  /** Closes a pool's connections idle this long (PostgreSQL, MariaDB). Default: the driver's (pg: 10 s; mysql2: 60 s). */
  idleTimeoutMs?: number;
  /** Where errors of the pool's connections are reported (see connection-error.guard.ts). Default: console.warn. */
  logger?: Pick<RelayLogger, 'warn'>;
  /**
   * Bounds each statement of a pool opened from a url (PostgreSQL, MariaDB), in ms: one its database
   * has not answered by then fails with `queryTimeout.error(ms)`, and its connection is destroyed.
   * Default: none (a statement waits for its answer or for the connection to break).
   */
  queryTimeout?: StatementTimeout;
}

/**
 * Opens the pool of a URL, loading its driver only now (each is an optional peer), or wraps the app's pool.
 * Either pool is guarded: an error on one of its connections is logged, never thrown at the process.
 */
export function openConnection(target: ConnectionTarget, { connectTimeoutMs, idleTimeoutMs, logger = console, queryTimeout }: OpenConnectionOptions = {}): OpenedConnection {
  const keep = async () => undefined;
  const pgLog = () => new ConnectionErrorLog(logger, 'PostgreSQL (outbox pool)');
  const mysqlLog = () => new ConnectionErrorLog(logger, 'MariaDB/MySQL (outbox pool)');
  if (target.kind === 'pg-pool') {
    guardPgPool(target.pool as unknown as PoolEvents, pgLog());
    return { connection: new PgPoolConnection(target.pool), close: keep };
  }
  if (target.kind === 'mysql2-pool') {
    guardMysql2Pool(target.pool as unknown as PoolEvents, mysqlLog());
    return { connection: new Mysql2PoolConnection(target.pool), close: keep };
  }
  switch (target.family) {
    case 'postgres': {
      const { Pool } = loadDataLayer<{ Pool: new (config: object) => PgPoolLike }>('pg', 'a postgres:// url', missingConnectionPackage);
      const pool = new Pool({ connectionString: target.url, max: target.poolSize, application_name: 'nest-outbox', connectionTimeoutMillis: connectTimeoutMs, idleTimeoutMillis: idleTimeoutMs, ...(queryTimeout ? { query_timeout: queryTimeout.ms } : {}) });
      guardPgPool(pool as unknown as PoolEvents, pgLog());
      return { connection: new PgPoolConnection(pool, queryTimeout), close: () => pool.end() };
    }
    case 'mariadb': {
      const mysql = loadDataLayer<{ createPool(config: object): Mysql2PoolLike }>('mysql2/promise', 'a mysql:// url', missingConnectionPackage);
      // Positions are BIGINT: kept as text, as TypeORM's MySQL driver does.
      const pool = mysql.createPool({ uri: target.url, connectionLimit: target.poolSize, supportBigNumbers: true, bigNumberStrings: true, connectTimeout: connectTimeoutMs, ...(idleTimeoutMs === undefined ? {} : { idleTimeout: idleTimeoutMs, maxIdle: 0 }) });
      guardMysql2Pool(pool as unknown as PoolEvents, mysqlLog());
      return { connection: new Mysql2PoolConnection(pool, queryTimeout), close: () => pool.end() };
    }
    case 'sqlite': {
      if (!existsSync(target.location)) throw new OutboxConfigurationError(connectionNoSqliteFile(target.location));
      const Database = loadDataLayer<new (path: string, options: object) => BetterSqliteLike>('better-sqlite3', 'a sqlite: url', missingConnectionPackage);
      // No busy timeout: it would block the event loop; the connection waits for locks itself.
      const database = new Database(target.location, { fileMustExist: true, timeout: 0 });
      return { connection: new BetterSqliteConnection(database), close: async () => void database.close() };
    }
  }
}
