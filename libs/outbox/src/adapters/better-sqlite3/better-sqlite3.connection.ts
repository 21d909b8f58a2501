import type { SqlStatement } from '../../sql/dialects/outbox-sql.dialect';
import { inOwnTransaction } from '../../sql/own-transaction';
import type { SqlConnection, SqlResult, SqlRunner, SqlSession } from '../../sql/sql-connection.port';

interface BetterSqliteStatement {
  readonly reader: boolean;
  all(...params: unknown[]): Record<string, unknown>[];
  run(...params: unknown[]): { changes: number };
}

/** The part of a `better-sqlite3` `Database` used here. */
export interface BetterSqliteLike {
  prepare(sql: string): BetterSqliteStatement;
  exec(sql: string): unknown;
  close(): unknown;
}

/**
 * A `better-sqlite3` database of the library's own (the app's data layer holds another connection
 * to the same file): statements are synchronous, and the library's own transactions take turns
 * with its single statements, so that none runs inside another's transaction on this connection.
 * Waiting for the app's write lock is SQLite's busy timeout (better-sqlite3's default 5 s).
 */
export class BetterSqliteConnection implements SqlConnection {
  readonly dialect = 'sqlite' as const;
  readonly layer = 'better-sqlite3';
  private readonly statements = new Map<string, BetterSqliteStatement>();
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly database: BetterSqliteLike) {}

  runner(): SqlRunner {
    return { rows: async (statement) => (await this.run(statement)).records };
  }

  run(statement: SqlStatement): Promise<SqlResult> {
    return this.inTurn(async () => this.execute(statement));
  }

  transaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T> {
    const exec = async (sql: string) => this.database.exec(sql);
    // A ROLLBACK that fails leaves nothing to give back: the connection is the module's alone.
    return this.inTurn(() => inOwnTransaction(exec, ['BEGIN IMMEDIATE'], () => work(async (statement) => this.execute(statement)), () => undefined));
  }

  private execute({ sql, params }: SqlStatement): SqlResult {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    if (statement.reader) {
      const records = statement.all(...params);
      return { records, affected: records.length };
    }
    return { records: [], affected: statement.run(...params).changes };
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }
}
