import type { OutboxTable } from './outbox-table';
import type { SqlStatement } from '../../core/sql-connection.port';

/**
 * MariaDB/MySQL keep an aggregate's positions in commit order with row locks on a small table
 * beside the outbox table, `<table>_locks`: one row per bucket, made and filled by the migration.
 * A writer locks the buckets of its aggregates (`SELECT … FOR UPDATE`) before it inserts; InnoDB
 * releases them when the transaction commits or rolls back, whoever opened it (TypeORM, Kysely,
 * Drizzle, MikroORM, Prisma). GET_LOCK, used before, belongs to the session and had to be released
 * by hand, which only TypeORM's subscriber could do.
 *
 * Two aggregates in one bucket wait for each other although they need not: with 1,024 buckets,
 * rarely, and never for long (until the other transaction ends). Record locks on existing primary
 * key rows take no gap locks, so buckets do not block their neighbours.
 */
export const LOCK_BUCKETS = 1024;

/**
 * The bucket of an aggregate key: FNV-1a (32 bits) over its UTF-8 bytes. Every writer, in every
 * process and version, must map a key to the same bucket, so this function must never change.
 */
export function lockBucket(aggregateKey: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(aggregateKey, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % LOCK_BUCKETS;
}

/** The distinct buckets of `keys`, ascending: every writer locks in the same order, so two writers cannot each hold what the other waits for within one statement. */
export function lockBuckets(keys: readonly string[]): number[] {
  return [...new Set(keys.map(lockBucket))].sort((a, b) => a - b);
}

/**
 * A range read on the primary key locks just the rows asked for (record locks, no gaps). MariaDB
 * 10.11 picks it by itself even for 901 of the 1,024 buckets (EXPLAIN: range, PRIMARY); FORCE INDEX
 * keeps it so on an optimizer that would rather scan, since a scan under FOR UPDATE would lock every
 * row it reads (REPEATABLE READ) and serialize all writers.
 */
export function lockBucketsStatement(table: OutboxTable, buckets: readonly number[]): SqlStatement {
  return {
    sql: `SELECT bucket FROM ${table.locks.quoted('mariadb')} FORCE INDEX (PRIMARY) WHERE bucket IN (${buckets.map(() => '?').join(', ')}) ORDER BY bucket FOR UPDATE`,
    params: [...buckets],
  };
}

export function createLockTable(table: OutboxTable): string[] {
  const name = table.locks.quoted('mariadb');
  const rows = Array.from({ length: LOCK_BUCKETS }, (_, bucket) => `(${bucket})`);
  const lines = Array.from({ length: LOCK_BUCKETS / 32 }, (_, line) => rows.slice(line * 32, line * 32 + 32).join(', '));
  return [
    `CREATE TABLE ${name} (bucket int NOT NULL PRIMARY KEY) ENGINE=InnoDB`,
    `INSERT INTO ${name} (bucket) VALUES\n${lines.join(',\n')}`,
  ];
}

export function dropLockTable(table: OutboxTable): string {
  return `DROP TABLE IF EXISTS ${table.locks.quoted('mariadb')}`;
}

/** For the startup probe: a table made before the lock table existed fails at startup, naming the migration, not at the first write. */
export function lockTableReadable(table: OutboxTable): string {
  return `NOT EXISTS (SELECT bucket FROM ${table.locks.quoted('mariadb')} WHERE 1 = 0)`;
}
