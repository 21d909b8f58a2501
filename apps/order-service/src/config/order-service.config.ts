import { resolve } from 'node:path';

export type DatabaseConfig =
  | { type: 'better-sqlite3'; database: string }
  | { type: 'postgres'; url: string; schema?: string }
  | { type: 'mariadb'; url: string };

export type BrokerConfig =
  | { transport: 'tcp'; host: string; port: number }
  | { transport: 'kafka'; brokers: string[]; clientId: string; groupId: string };

export interface OrderServiceConfig {
  httpPort: number;
  database: DatabaseConfig;
  broker: BrokerConfig;
  /** Topic (or TCP pattern) of all order events; the message key is the order id. */
  ordersTopic: string;
  outbox: {
    /** Whether this instance runs the outbox relay. */
    relay: boolean;
    pollIntervalMs: number;
    backoffInitialMs: number;
    backoffMaxMs: number;
    /** `/health` reports the outbox down when its oldest pending event is older than this. Default 60000. */
    healthMaxLagMs?: number;
    /** Attempts before an event is dead. Default 10. */
    maxAttempts?: number;
    /** How long outbox stats (metrics gauges, health) are cached. Default 5000. */
    statsRefreshMs?: number;
    /** How events reach the broker: `table` (the relay leases rows) or `wal` (PostgreSQL only: streamed from the WAL). Default `table`. */
    delivery?: 'table' | 'wal';
  };
  /**
   * `demo-no-auth` mounts the outbox console at /outbox with NO authentication, for trying it on a
   * developer machine. Never set it anywhere reachable by others: mount the console with a guard.
   * Default `off`.
   */
  console?: 'off' | 'demo-no-auth';
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Reads the settings documented in the README from environment variables. */
export function loadOrderServiceConfig(env: NodeJS.ProcessEnv = process.env): OrderServiceConfig {
  return {
    httpPort: port(env, 'PORT', 3000),
    database: database(env.DATABASE_URL ?? 'sqlite:.data/order-service.sqlite'),
    broker: broker(env),
    ordersTopic: topic(env.ORDERS_TOPIC ?? 'orders'),
    outbox: {
      delivery: delivery(env.OUTBOX_DELIVERY ?? 'table', env.DATABASE_URL),
      relay: flag(env, 'OUTBOX_RELAY', true),
      pollIntervalMs: positiveInteger(env, 'OUTBOX_POLL_INTERVAL_MS', 5_000),
      backoffInitialMs: positiveInteger(env, 'OUTBOX_BACKOFF_INITIAL_MS', 1_000),
      backoffMaxMs: positiveInteger(env, 'OUTBOX_BACKOFF_MAX_MS', 60_000),
      healthMaxLagMs: positiveInteger(env, 'OUTBOX_HEALTH_MAX_LAG_MS', 60_000),
      maxAttempts: positiveInteger(env, 'OUTBOX_MAX_ATTEMPTS', 10),
      statsRefreshMs: positiveInteger(env, 'OUTBOX_STATS_REFRESH_MS', 5_000),
    },
    console: consoleMode(env.OUTBOX_CONSOLE ?? 'off'),
  };
}

function database(url: string): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (!file) throw new ConfigError(`DATABASE_URL "${withoutPassword(url)}" names no file; use sqlite:path/to/file.sqlite or sqlite::memory:`);
    return { type: 'better-sqlite3', database: file === ':memory:' ? file : resolve(file) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { type: 'postgres', url };
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) return { type: 'mariadb', url: url.replace(/^mariadb:/, 'mysql:') };
  throw new ConfigError(`DATABASE_URL "${withoutPassword(url)}" is not supported: use sqlite:<file>, postgres://user@host:port/db or mysql://user:password@host:port/db.`);
}

/** Error messages end up in logs: a URL is shown with its password masked, whatever its scheme. */
export function withoutPassword(url: string): string {
  return url.replace(/^([^:/?#]*:\/\/[^:/@?#]*):[^@/?#]*@/, '$1:***@');
}

function broker(env: NodeJS.ProcessEnv): BrokerConfig {
  const transport = env.BROKER ?? 'tcp';
  if (transport === 'tcp') {
    return { transport, host: env.TCP_HOST ?? '127.0.0.1', port: port(env, 'TCP_PORT', 4100) };
  }
  if (transport === 'kafka') {
    const brokers = (env.KAFKA_BROKERS ?? 'localhost:9092').split(',').map((entry) => entry.trim()).filter(Boolean);
    if (brokers.length === 0) throw new ConfigError('KAFKA_BROKERS is empty: give host:port[,host:port…].');
    return {
      transport,
      brokers,
      clientId: env.KAFKA_CLIENT_ID ?? 'order-service',
      groupId: env.KAFKA_GROUP_ID ?? 'order-service-consumer',
    };
  }
  throw new ConfigError(`BROKER "${transport}" is not supported: use tcp (default) or kafka.`);
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = positiveInteger(env, name, fallback);
  if (value > 65_535) throw new ConfigError(`${name} "${value}" is not a TCP port (1–65535).`);
  return value;
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new ConfigError(`${name} "${raw}" must be a positive integer.`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} "${raw}" must be true or false.`);
}

function delivery(value: string, url: string | undefined): 'table' | 'wal' {
  if (value !== 'table' && value !== 'wal') throw new ConfigError(`OUTBOX_DELIVERY "${value}" must be table or wal.`);
  if (value === 'wal' && !/^postgres(ql)?:\/\//.test(url ?? '')) {
    throw new ConfigError(`OUTBOX_DELIVERY "wal" streams from PostgreSQL's write-ahead log: set DATABASE_URL to a postgres:// URL (a server with wal_level = logical), or leave OUTBOX_DELIVERY at table.`);
  }
  return value;
}

function consoleMode(value: string): 'off' | 'demo-no-auth' {
  if (value === 'off' || value === 'demo-no-auth') return value;
  throw new ConfigError(`OUTBOX_CONSOLE "${value}" must be off or demo-no-auth (the console without authentication, for a local demo only).`);
}

function topic(value: string): string {
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(value)) throw new ConfigError(`ORDERS_TOPIC "${value}" may only hold letters, digits, ".", "_" and "-".`);
  return value;
}
