import type { SqlStatement } from '../../core/sql-connection.port';
import { inOwnTransaction } from '../../sql/own-transaction';
import type { SqlConnection, SqlResult, SqlRunner, SqlSession } from '../../core/sql-connection.port';

type Mysql2Reply = [unknown, unknown];

/** The part of a `mysql2/promise` pool connection used here. */
interface Mysql2Connection {
  query(sql: string, values?: unknown[]): Promise<Mysql2Reply>;
  release(): void;
  destroy?(): void;
}

/** The part of a `mysql2/promise` pool used here (a callback pool is turned into one with `pool.promise()`). */
export interface Mysql2PoolLike {
  query(sql: string, values?: unknown[]): Promise<Mysql2Reply>;
  getConnection(): Promise<Mysql2Connection>;
  end(): Promise<void>;
}

/** A mysql2 pool (MariaDB, MySQL) as the library's connection: changes report affected rows, reads their rows. */
export class Mysql2PoolConnection implements SqlConnection {
  readonly dialect = 'mariadb' as const;
  readonly layer = 'mysql2';

  constructor(private readonly pool: Mysql2PoolLike) {}

  runner(): SqlRunner {
    return { rows: async (statement) => (await this.run(statement)).records };
  }

  async run({ sql, params }: SqlStatement): Promise<SqlResult> {
    return toResult(await this.pool.query(sql, params));
  }

  async transaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T> {
    const connection = await this.pool.getConnection();
    let broken = false;
    const run: SqlSession = async ({ sql, params }) => toResult(await connection.query(sql, params));
    try {
      const begin = ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION'];
      return await inOwnTransaction((sql) => connection.query(sql), begin, () => work(run), () => (broken = true));
    } finally {
      if (broken && connection.destroy) connection.destroy();
      else connection.release();
    }
  }
}

function toResult([rows]: Mysql2Reply): SqlResult {
  if (Array.isArray(rows)) return { records: rows as Record<string, unknown>[], affected: 0 };
  return { records: [], affected: Number((rows as { affectedRows?: number }).affectedRows ?? 0) };
}
