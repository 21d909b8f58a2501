import type { SqlStatement } from '../../core/sql-connection.port';
import { inOwnTransaction } from '../../sql/own-transaction';
import type { SqlConnection, SqlResult, SqlRunner, SqlSession } from '../../core/sql-connection.port';

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

/** How long a statement waits for the app's write lock before it fails (the relay then tries at its next poll). */
const BUSY_WAIT_MS = 5_000;

/**
 * A `better-sqlite3` database of the library's own (the app's data layer holds another connection
 * to the same file): statements are synchronous, and the library's own transactions take turns
 * with its single statements, so that none runs inside another's transaction on this connection.
 * Open it with `timeout: 0`: SQLite's busy timeout would wait inside the synchronous call, blocking
 * the event loop, and so the very app transaction whose lock it waits for. Here a busy statement
 * is tried again a few milliseconds later instead, for up to 5 s.
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
    return this.inTurn(() => whenNotBusy(() => this.execute(statement)));
  }

  transaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T> {
    const exec = (sql: string) => whenNotBusy(() => this.database.exec(sql));
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

/** Runs `attempt` until SQLite stops answering SQLITE_BUSY (the app's transaction holds the lock), for up to 5 s. */
async function whenNotBusy<T>(attempt: () => T): Promise<T> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      return attempt();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
