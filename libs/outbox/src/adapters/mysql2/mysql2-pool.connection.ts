import type { SqlStatement } from '../../core/sql-connection.port';
import { inOwnTransaction } from '../../sql/own-transaction';
import type { SqlConnection, SqlResult, SqlRunner, SqlSession } from '../../core/sql-connection.port';
import { isStatementTimeout, nameTimeout, NOT_SENT_AFTER_TIMEOUT, type StatementTimeout } from '../connection/statement-timeout';

type Mysql2Reply = [unknown, unknown];

/** The part of a `mysql2/promise` pool connection used here. */
interface Mysql2Connection {
  query(sql: string, values?: unknown[]): Promise<Mysql2Reply>;
  query(options: { sql: string; values?: unknown[]; timeout: number }): Promise<Mysql2Reply>;
  release(): void;
  destroy?(): void;
  /** The callback connection under the promise one, and its socket. */
  connection?: { stream?: { destroy(): void } };
}

/** The part of a `mysql2/promise` pool used here (a callback pool is turned into one with `pool.promise()`). */
export interface Mysql2PoolLike {
  query(sql: string, values?: unknown[]): Promise<Mysql2Reply>;
  getConnection(): Promise<Mysql2Connection>;
  end(): Promise<void>;
}

/**
 * A mysql2 pool (MariaDB, MySQL) as the library's connection: changes report affected rows, reads their rows.
 *
 * With a `timeout`, each statement runs with mysql2's per-query `timeout` on a connection taken
 * from the pool. That timeout only rejects the promise: the command stays at the head of the
 * connection's queue, and everything sent after it waits behind it. So a connection whose
 * statement timed out is destroyed, never released, and no ROLLBACK is sent on it.
 */
export class Mysql2PoolConnection implements SqlConnection {
  readonly dialect = 'mariadb' as const;
  readonly layer = 'mysql2';

  constructor(
    private readonly pool: Mysql2PoolLike,
    private readonly timeout?: StatementTimeout,
  ) {}

  runner(): SqlRunner {
    return { rows: async (statement) => (await this.run(statement)).records };
  }

  async run(statement: SqlStatement): Promise<SqlResult> {
    if (!this.timeout) return toResult(await this.pool.query(statement.sql, statement.params));
    const held = new HeldConnection(await this.pool.getConnection(), this.timeout);
    try {
      return await held.run(statement);
    } finally {
      held.giveBack(false);
    }
  }

  async transaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T> {
    const held = new HeldConnection(await this.pool.getConnection(), this.timeout);
    let broken = false;
    try {
      const begin = ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION'];
      return await inOwnTransaction((sql) => held.command(sql), begin, () => work((statement) => held.run(statement)), () => (broken = true));
    } finally {
      held.giveBack(broken);
    }
  }
}

/** A connection out of the pool: its statements, bounded when a timeout is set, and how it goes back. */
class HeldConnection {
  private timedOut = false;

  constructor(
    private readonly connection: Mysql2Connection,
    private readonly timeout: StatementTimeout | undefined,
  ) {}

  async run({ sql, params }: SqlStatement): Promise<SqlResult> {
    if (!this.timeout) return toResult(await this.connection.query(sql, params));
    if (this.timedOut) throw new Error(NOT_SENT_AFTER_TIMEOUT);
    try {
      return toResult(await this.connection.query({ sql, values: params, timeout: this.timeout.ms }));
    } catch (error) {
      this.timedOut ||= isStatementTimeout(error);
      throw nameTimeout(this.timeout, error);
    }
  }

  /** BEGIN, COMMIT, ROLLBACK: without values. */
  command(sql: string): Promise<unknown> {
    return this.timeout ? this.run({ sql, params: [] }) : this.connection.query(sql);
  }

  giveBack(broken: boolean): void {
    if ((broken || this.timedOut) && this.connection.destroy) {
      this.connection.destroy();
      // mysql2's destroy() only half-closes the socket and waits for the server's end, which a hung
      // server never sends: the socket would stay open until TCP gives up.
      if (this.timedOut) this.connection.connection?.stream?.destroy();
    } else this.connection.release();
  }
}

function toResult([rows]: Mysql2Reply): SqlResult {
  if (Array.isArray(rows)) return { records: rows as Record<string, unknown>[], affected: 0 };
  return { records: [], affected: Number((rows as { affectedRows?: number }).affectedRows ?? 0) };
}
