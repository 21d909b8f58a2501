import { OutboxWriteError } from '../core/outbox.errors';
import { aggregateLockTimeout, lockBucketsMissing } from '../core/outbox.messages';
import type { OutboxTableDialect } from './dialects/outbox-sql.dialect';

/** Runs a statement in the writing transaction and returns its rows. */
export type RunInTransaction = (sql: string, params: unknown[]) => Promise<unknown[]>;

/**
 * Takes the commit-order locks of `keys` (aggregate keys) in the writer's transaction, before its
 * rows get positions: a later writer of the same aggregate gets its positions only after the
 * earlier one has committed. Every write path calls this (TypeORM saves and `add`, the other data
 * layers, on every database), so all of them wait for each other; the locks end with the transaction.
 */
export async function lockAggregates(dialect: OutboxTableDialect, keys: readonly string[], run: RunInTransaction): Promise<void> {
  const sorted = [...new Set(keys)].sort();
  const statement = sorted.length === 0 ? undefined : dialect.lockAggregates(sorted);
  if (!statement) return;
  let rows: unknown[];
  try {
    rows = await run(statement.sql, statement.params);
  } catch (error) {
    if (isLockWaitTimeout(error)) throw new OutboxWriteError(aggregateLockTimeout(sorted.map((key) => key.replace('\u001f', ' '))), { cause: error });
    throw error;
  }
  if (statement.expectedRows !== undefined && (rows?.length ?? 0) < statement.expectedRows) {
    throw new OutboxWriteError(lockBucketsMissing(statement.lockTable ?? 'the lock table', rows?.length ?? 0, statement.expectedRows));
  }
}

/**
 * ER_LOCK_WAIT_TIMEOUT (1205), however the data layer wraps it: mysql2 and mariadb set `errno`,
 * TypeORM copies it onto its QueryFailedError, Drizzle keeps it as `cause`, Prisma only in the text.
 */
export function isLockWaitTimeout(error: unknown): boolean {
  for (let current = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; current = (current as { cause?: unknown }).cause, depth += 1) {
    const { errno, code, message } = current as { errno?: unknown; code?: unknown; message?: unknown };
    if (errno === 1205 || code === 'ER_LOCK_WAIT_TIMEOUT') return true;
    if (typeof message === 'string' && message.includes('Lock wait timeout exceeded')) return true;
  }
  return false;
}
