import { OutboxWriteError } from '../../core/outbox.errors';
import { notInTransaction } from '../../sql/sql-outbox.messages';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import { carryToCommit } from './commit-carrier';
import type { DataLayerOptions } from '../data-layer.port';

/** The part of a node-postgres `Client` / `PoolClient` used here (`getTransactionStatus` since pg 8.21). */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  getTransactionStatus(): string | null;
}

export function isPgClient(value: object): value is PgClientLike {
  const candidate = value as Partial<PgClientLike>;
  return typeof candidate.query === 'function' && typeof candidate.getTransactionStatus === 'function';
}

/** A pool hands out clients; its own `query` runs each statement on whichever client is free, outside any transaction. */
export function isPgPool(value: object): boolean {
  const candidate = value as { query?: unknown; connect?: unknown; totalCount?: unknown };
  return typeof candidate.query === 'function' && typeof candidate.connect === 'function' && typeof candidate.totalCount === 'number';
}

/** A node-postgres client after `BEGIN`: the status the server reported with its last reply says so. */
export function pgTransaction(client: PgClientLike, { writeWithCommit = true }: Pick<DataLayerOptions, 'writeWithCommit'> = {}): SqlTransaction {
  // 'T' in a transaction, 'E' in a failed one (whose statements the server refuses, loudly); 'I' idle, null not connected.
  const status = client.getTransactionStatus();
  if (status !== 'T' && status !== 'E') {
    throw new OutboxWriteError(notInTransaction('pg', 'a client', `Run "await client.query('BEGIN')" on a client from pool.connect() first, and COMMIT after add().`));
  }
  return {
    dialect: 'postgres',
    layer: 'pg',
    owner: client,
    query: async (sql, params) => (await client.query(sql, [...params])).rows,
    execute: async (sql, params) => void (await client.query(sql, [...params])),
    executeWithCommit: writeWithCommit ? (sql, params) => carryToCommit(client, { text: sql, values: params }) : undefined,
  };
}
