import type { SqlDialectName } from './sql-transaction.port';

/** A statement and its parameters, in the placeholders of its dialect. */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/** Runs one statement outside any application transaction and returns its rows. */
export interface SqlRunner {
  rows(statement: SqlStatement): Promise<Record<string, unknown>[]>;
}

/** A statement's rows, and the rows it changed (MariaDB reports changes so, instead of returning them). */
export interface SqlResult {
  records: Record<string, unknown>[];
  affected: number;
}

/** Runs statements inside one of the library's own short transactions. */
export type SqlSession = (statement: SqlStatement) => Promise<SqlResult>;

/** A PostgreSQL client held for LISTEN, and how to give it back (`true`: it broke, destroy it). */
export interface ListenClient {
  client: {
    query(sql: string): Promise<unknown>;
    on(event: 'notification', listener: (message: { channel: string }) => void): void;
    on(event: 'error' | 'end', listener: (error?: Error) => void): void;
    removeListener(event: 'notification' | 'error' | 'end', listener: (...args: never[]) => void): void;
  };
  release(broken?: boolean): void;
}

/**
 * What the relay, cleanup, stats, console, CLI, inbox and poison stores need of a database, whatever
 * opened it: TypeORM's DataSource, a `pg` pool, a `mysql2` pool or a `better-sqlite3` database.
 * Every statement here runs outside application transactions; the application's own go through
 * its data layer (`SqlTransaction`).
 */
export interface SqlConnection {
  readonly dialect: SqlDialectName;
  /** What opened it, for messages: `typeorm`, `pg`, `mysql2`, `better-sqlite3`. */
  readonly layer: string;
  /** Statements in autocommit; `prepared` names them on PostgreSQL (parsed and planned once per connection). */
  runner(options?: { prepared?: boolean }): SqlRunner;
  /** One statement in autocommit, with the rows it changed. */
  run(statement: SqlStatement): Promise<SqlResult>;
  /** A short READ COMMITTED transaction of the library's own, on one connection. */
  transaction<T>(work: (run: SqlSession) => Promise<T>): Promise<T>;
  /** PostgreSQL: the most connections the pool opens, when known (the LISTEN client keeps one). */
  readonly poolSize?: number;
  /** PostgreSQL: a pooled client to LISTEN on, kept until released. */
  listenClient?(): Promise<ListenClient>;
  /** PostgreSQL: how to open a replication connection of its own (WAL mode). */
  readonly connectionConfig?: Record<string, unknown>;
}

/** The TypeORM driver type names the dialect factories speak, per SQL family. */
export function driverTypeOf(dialect: SqlDialectName): 'postgres' | 'mariadb' | 'better-sqlite3' {
  return dialect === 'sqlite' ? 'better-sqlite3' : dialect;
}
