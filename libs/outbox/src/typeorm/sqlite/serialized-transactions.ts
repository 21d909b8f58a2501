import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { ConnectionTurns } from './connection-turns';

/**
 * How long a transaction or statement waits for SQLite's connection before it fails. Far above any
 * queue of ordinary transactions; reached when a statement waits for the very transaction that
 * waits for it (see sqliteConnectionWaitTimedOut).
 */
const MAX_WAIT_MS = 30_000;

/** Released query runners kept for the next caller: each holds its own cache of prepared statements. */
const IDLE_RUNNERS = 16;

/** The query runner whose transaction callback is running, so its own statements are not made to wait for it. */
const insideTransaction = new AsyncLocalStorage<QueryRunner>();

interface Serialization {
  users: number;
  turns: ConnectionTurns<object>;
  undo(): void;
}
const serialized = new WeakMap<DataSource, Serialization>();

type QueryRunnerClass = new (driver: unknown) => QueryRunner;
interface SqliteDriver {
  createQueryRunner(mode?: string): QueryRunner;
}

/**
 * TypeORM drives better-sqlite3 through one query runner on one connection, shared by every
 * caller: a second transaction that starts while one is open becomes a savepoint of it (its work
 * rolls back with the other's), or fails; a statement outside both runs inside whichever is open
 * and can read, or join, writes that are later rolled back. From here on, every caller gets a query
 * runner of its own, and the connection goes to one transaction (or one statement outside any) at
 * a time, in arrival order. What a transaction's callback runs through the DataSource instead of
 * its EntityManager still runs inside that transaction, as TypeORM has always done on SQLite;
 * making it wait would wait forever.
 *
 * Returns the function that undoes it once the last user is done. Other databases are left alone.
 */
export function serializeSqliteTransactions(dataSource: DataSource, maxWaitMs = MAX_WAIT_MS): () => void {
  if (dataSource.options.type !== 'better-sqlite3') return () => undefined;
  let serialization = serialized.get(dataSource);
  if (serialization) serialization.users += 1;
  else {
    const turns = new ConnectionTurns<object>(maxWaitMs);
    serialization = { users: 1, turns, undo: install(dataSource, turns) };
    serialized.set(dataSource, serialization);
  }
  let released = false;
  return () => {
    if (released || !serialization) return;
    released = true;
    serialization.users -= 1;
    if (serialization.users > 0) return;
    serialized.delete(dataSource);
    serialization.undo();
  };
}

/** The turns of a serialized SQLite data source, for statements that run on its connection without TypeORM. */
export function connectionTurnsOf(dataSource: DataSource): ConnectionTurns<object> | undefined {
  return serialized.get(dataSource)?.turns;
}

function install(dataSource: DataSource, turns: ConnectionTurns<object>): () => void {
  const driver = dataSource.driver as unknown as SqliteDriver;
  const shared = driver.createQueryRunner('master');
  const RunnerClass = shared.constructor as QueryRunnerClass;
  const undoShared = takeTurns(shared, turns);
  const idle: QueryRunner[] = [];
  driver.createQueryRunner = () => {
    const enclosing = insideTransaction.getStore();
    if (enclosing?.isTransactionActive && turns.isHeldBy(enclosing)) return enclosing;
    const runner = idle.pop() ?? new RunnerClass(driver);
    if (!isTakingTurns(runner)) takeTurns(runner, turns, idle);
    return runner;
  };

  const manager = dataSource.manager;
  const transaction = manager.transaction as (...args: unknown[]) => Promise<unknown>;
  manager.transaction = function transactionInItsTurn(this: EntityManager, ...args: unknown[]) {
    const at = typeof args[0] === 'function' ? 0 : 1;
    const work = args[at];
    if (typeof work === 'function') {
      args[at] = (inner: EntityManager) => insideTransaction.run(inner.queryRunner!, () => work(inner));
    }
    return transaction.apply(this, args);
  } as EntityManager['transaction'];

  return () => {
    delete (driver as Partial<SqliteDriver>).createQueryRunner;
    delete (manager as Partial<EntityManager>).transaction;
    undoShared();
  };
}

const takingTurns = new WeakSet<QueryRunner>();

function isTakingTurns(runner: QueryRunner): boolean {
  return takingTurns.has(runner);
}

/**
 * Makes `runner` wait for its turn before it begins a transaction or runs a statement outside one;
 * with `idle`, a release between transactions puts it there for the next caller.
 */
function takeTurns(runner: QueryRunner, turns: ConnectionTurns<object>, idle?: QueryRunner[]): () => void {
  takingTurns.add(runner);
  const { startTransaction, commitTransaction, rollbackTransaction, query, release } = runner;
  const depth = () => (runner as unknown as { transactionDepth: number }).transactionDepth;
  const giveBackIfDone = () => {
    if (!runner.isTransactionActive || depth() === 0) turns.give(runner);
  };
  const ended = async (end: () => Promise<void>) => {
    try {
      await end();
    } finally {
      // A COMMIT that failed leaves the transaction open for the rollback that follows.
      if (!runner.isTransactionActive) turns.give(runner);
    }
  };
  Object.assign(runner, {
    async startTransaction(...args: Parameters<QueryRunner['startTransaction']>) {
      if (!runner.isTransactionActive) await turns.take(runner);
      try {
        await startTransaction.apply(runner, args);
      } catch (error) {
        giveBackIfDone();
        throw error;
      }
    },
    commitTransaction: () => ended(() => commitTransaction.call(runner)),
    rollbackTransaction: () => ended(() => rollbackTransaction.call(runner)),
    async query(...args: Parameters<QueryRunner['query']>) {
      if (turns.isHeldBy(runner)) return query.apply(runner, args);
      await turns.take(runner);
      try {
        return await query.apply(runner, args);
      } finally {
        if (!runner.isTransactionActive) turns.give(runner);
      }
    },
    async release() {
      await release.call(runner);
      // Not while a transaction is open: that is the enclosing transaction's runner, released by a nested `transaction()`.
      if (idle && !runner.isTransactionActive && !turns.isHeldBy(runner) && idle.length < IDLE_RUNNERS && !idle.includes(runner)) idle.push(runner);
    },
  });
  return () => {
    takingTurns.delete(runner);
    for (const method of ['startTransaction', 'commitTransaction', 'rollbackTransaction', 'query', 'release'] as const) delete runner[method];
  };
}
