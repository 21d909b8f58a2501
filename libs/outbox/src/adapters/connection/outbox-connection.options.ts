import { OutboxConfigurationError } from '../../core/outbox.errors';
import type { Mysql2PoolLike } from '../mysql2/mysql2-pool.connection';
import type { PgPoolLike } from '../pg/pg-pool.connection';
import {
  connectionBadPoolSize,
  connectionBadUrl,
  connectionNotAnObject,
  connectionPoolSizeWithPool,
  connectionUnknownKey,
  connectionUnknownPool,
  connectionUrlAndPool,
} from './connection.messages';

/**
 * The database of `OutboxModule.forRoot({ connection })`, for apps without TypeORM: the relay,
 * cleanup, stats, console and WAL stream run on it. Either a URL the module opens a pool for (and
 * closes at shutdown), or your own pool (never ended by the module).
 */
export type OutboxConnectionOptions =
  | {
      /** `postgres://…` (needs `pg`), `mysql://…` / `mariadb://…` (needs `mysql2`), or `sqlite:<path>` (needs `better-sqlite3`; the file must exist). */
      url: string;
      /** Most connections of the pool the module opens (PostgreSQL, MariaDB/MySQL). Default 10. */
      poolSize?: number;
    }
  | {
      /**
       * A node-postgres `Pool` (the one Prisma's `PrismaPg`, Drizzle, Kysely or MikroORM sits on does),
       * or a `mysql2` pool (callback or promise API).
       */
      pool: PgPoolLike | Mysql2PoolLike | object;
    };

export type ConnectionTarget =
  | { kind: 'url'; family: 'postgres' | 'mariadb' | 'sqlite'; url: string; location: string; poolSize: number }
  | { kind: 'pg-pool'; pool: PgPoolLike }
  | { kind: 'mysql2-pool'; pool: Mysql2PoolLike };

const KEYS = ['url', 'poolSize', 'pool'];

/** Checks the option where the module is declared, before anything connects; says what to write instead. */
export function resolveConnectionOption(value: unknown): ConnectionTarget {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new OutboxConfigurationError(connectionNotAnObject(value));
  const options = value as Record<string, unknown>;
  const unknown = Object.keys(options).find((key) => !KEYS.includes(key));
  if (unknown) throw new OutboxConfigurationError(connectionUnknownKey(unknown));
  if (options.url !== undefined && options.pool !== undefined) throw new OutboxConfigurationError(connectionUrlAndPool());
  if (options.pool !== undefined) {
    if (options.poolSize !== undefined) throw new OutboxConfigurationError(connectionPoolSizeWithPool());
    return poolTarget(options.pool);
  }
  if (options.url === undefined) throw new OutboxConfigurationError(connectionNotAnObject(value));
  const poolSize = options.poolSize ?? 10;
  if (!Number.isInteger(poolSize) || (poolSize as number) < 2) throw new OutboxConfigurationError(connectionBadPoolSize(options.poolSize));
  return urlTarget(options.url, poolSize as number);
}

function urlTarget(url: unknown, poolSize: number): ConnectionTarget {
  if (typeof url !== 'string') throw new OutboxConfigurationError(connectionBadUrl(url));
  if (/^postgres(ql)?:\/\/[^/]+/.test(url)) return { kind: 'url', family: 'postgres', url, location: url, poolSize };
  if (/^(mysql|mariadb):\/\/[^/]+/.test(url)) return { kind: 'url', family: 'mariadb', url: url.replace(/^mariadb:/, 'mysql:'), location: url, poolSize };
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/.exec(url);
  if (sqlite) return { kind: 'url', family: 'sqlite', url, location: sqlite[1], poolSize };
  throw new OutboxConfigurationError(connectionBadUrl(url));
}

function poolTarget(pool: unknown): ConnectionTarget {
  const candidate = pool as Record<string, unknown> | null;
  if (candidate && typeof candidate === 'object') {
    // node-postgres: a Pool counts its clients; mysql2: a pool hands out connections, and its callback form has promise().
    if (typeof candidate.connect === 'function' && typeof candidate.query === 'function' && typeof candidate.totalCount === 'number') {
      return { kind: 'pg-pool', pool: candidate as unknown as PgPoolLike };
    }
    if (typeof candidate.getConnection === 'function' && typeof candidate.query === 'function') {
      const promised = typeof candidate.promise === 'function' ? (candidate.promise as () => Mysql2PoolLike)() : (candidate as unknown as Mysql2PoolLike);
      return { kind: 'mysql2-pool', pool: promised };
    }
  }
  throw new OutboxConfigurationError(connectionUnknownPool(pool));
}
