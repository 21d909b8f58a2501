import type { SqlStatement } from '../../core/sql-connection.port';
import { inOwnTransaction } from '../../sql/own-transaction';
import { preparedStatementName } from '../../sql/prepared-statement-name';
import { isStatementTimeout, nameTimeout, NOT_SENT_AFTER_TIMEOUT, type StatementTimeout } from '../connection/statement-timeout';
import type { ListenClient, SqlConnection, SqlResult, SqlRunner, SqlSession } from '../../core/sql-connection.port';

interface PgQueryConfig {
  name?: string;
  text: string;
  values: unknown[];
}

interface PgResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** The part of a node-postgres `PoolClient` used here. */
interface PgPoolClient {
  query(config: PgQueryConfig): Promise<PgResult>;
  query(text: string): Promise<PgResult>;
  release(destroy?: boolean): void;
}

/** The part of a node-postgres `Pool` used here; Prisma's `PrismaPg`, Drizzle, Kysely and MikroORM can all sit on one. */
export interface PgPoolLike {
  query(config: PgQueryConfig): Promise<PgResult>;
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  readonly options?: Record<string, unknown> & { max?: number };
}

/** A node-postgres pool as the library's connection: each statement on a pooled client, in autocommit. */
export class PgPoolConnection implements SqlConnection {
  readonly dialect = 'postgres' as const;
  readonly layer = 'pg';

  /**
   * `timeout`: the pool was opened with node-postgres' `query_timeout` of `timeout.ms`, whose
   * errors are named by it. `Pool.query` releases a client with its error, which destroys it.
   */
  constructor(
    private readonly pool: PgPoolLike,
    private readonly timeout?: StatementTimeout,
  ) {}

  runner({ prepared = false }: { prepared?: boolean } = {}): SqlRunner {
    // Named statements are parsed and planned once per pooled client; the relay runs the same few many times a second.
    return { rows: async ({ sql, params }) => (await this.query({ ...(prepared ? { name: preparedStatementName(sql) } : {}), text: sql, values: params })).rows };
  }

  async run({ sql, params }: SqlStatement): Promise<SqlResult> {
    const result = await this.query({ text: sql, values: params });
    return { records: result.rows, affected: result.rowCount ?? 0 };
  }

  async transaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    let timedOut = false;
    const exec = async (statement: PgQueryConfig | string) => {
      // After a timeout the statement still holds the connection: a ROLLBACK would wait behind it.
      if (timedOut) throw new Error(NOT_SENT_AFTER_TIMEOUT);
      try {
        return await (typeof statement === 'string' ? client.query(statement) : client.query(statement));
      } catch (error) {
        timedOut ||= isStatementTimeout(error);
        throw nameTimeout(this.timeout, error);
      }
    };
    const run: SqlSession = async ({ sql, params }) => {
      const { rows, rowCount } = await exec({ text: sql, values: params });
      return { records: rows, affected: rowCount ?? 0 };
    };
    try {
      return await inOwnTransaction((sql) => exec(sql), ['BEGIN ISOLATION LEVEL READ COMMITTED'], () => work(run), () => (broken = true));
    } finally {
      // A client whose statement timed out is destroyed (its end() cuts a connection with a query outstanding).
      client.release(broken || timedOut);
    }
  }

  /** node-postgres' `max` (10 unless configured). */
  get poolSize(): number | undefined {
    return this.pool.options?.max ?? 10;
  }

  get connectionConfig(): Record<string, unknown> {
    return { ...(this.pool.options ?? {}) };
  }

  private async query(config: PgQueryConfig): Promise<PgResult> {
    try {
      return await this.pool.query(config);
    } catch (error) {
      throw nameTimeout(this.timeout, error);
    }
  }

  async listenClient(): Promise<ListenClient> {
    const client = await this.pool.connect();
    return { client: client as unknown as ListenClient['client'], release: (broken) => client.release(broken === true) };
  }
}
