import { OutboxWriteError } from '../../core/outbox.errors';
import { splitPlaceholders } from '../../sql/positional-params';
import { notInTransaction, unknownDialect } from '../../sql/sql-outbox.messages';
import type { SqlTransaction } from '../../sql/sql-transaction.port';
import { loadDataLayer } from '../load-data-layer';

/** The part of a Drizzle database or transaction used here. */
export interface DrizzleTransactionLike {
  execute(query: any): PromiseLike<unknown>;
  transaction(work: (tx: any) => Promise<unknown>, config?: any): Promise<unknown>;
}

interface DrizzleModule {
  sql: { raw(text: string): unknown; param(value: unknown): unknown; join(chunks: unknown[]): unknown };
  is(value: unknown, type: unknown): boolean;
  entityKind: symbol;
}

interface DrizzlePgCore {
  PgDatabase: unknown;
  PgTransaction: unknown;
}

export function isDrizzle(value: object): value is DrizzleTransactionLike {
  const candidate = value as Partial<DrizzleTransactionLike> & { select?: unknown };
  return typeof candidate.execute === 'function' && typeof candidate.transaction === 'function' && typeof candidate.select === 'function';
}

/**
 * A Drizzle PostgreSQL transaction (`db.transaction(async (tx) => …)`, any pg driver). The SQL
 * goes through `tx.execute` as a Drizzle `sql` object, its values as parameters, which Drizzle
 * numbers again in the order they appear.
 */
export function drizzleTransaction(tx: DrizzleTransactionLike): SqlTransaction {
  const drizzle = loadDataLayer<DrizzleModule>('drizzle-orm', 'drizzle');
  const pg = loadDataLayer<DrizzlePgCore>('drizzle-orm/pg-core', 'drizzle');
  if (!drizzle.is(tx, pg.PgDatabase)) {
    const kind = (tx.constructor as unknown as Record<symbol, unknown> | undefined)?.[drizzle.entityKind];
    throw new OutboxWriteError(unknownDialect('drizzle', String(kind ?? 'unknown'), 'PostgreSQL'));
  }
  if (!drizzle.is(tx, pg.PgTransaction)) {
    throw new OutboxWriteError(notInTransaction('drizzle', 'a Drizzle database', 'Pass the transaction: db.transaction(async (tx) => outbox.add(tx, ...)).'));
  }
  const { sql } = drizzle;
  const query = async (text: string, params: readonly unknown[]) => {
    const statement = sql.join(splitPlaceholders(text, params).map((part) => ('text' in part ? sql.raw(part.text) : sql.param(part.value))));
    const result = (await tx.execute(statement)) as { rows?: Record<string, unknown>[] } | Record<string, unknown>[];
    // node-postgres answers with a result object, postgres.js with the rows themselves.
    return Array.isArray(result) ? result : (result.rows ?? []);
  };
  return { dialect: 'postgres', layer: 'drizzle', owner: tx, query, execute: async (text, params) => void (await query(text, params)) };
}
