import { OutboxWriteError } from '../../core/outbox.errors';
import { splitPlaceholders, splitQuestionMarks } from '../../sql/positional-params';
import { notInTransaction, unknownDialect } from '../../sql/sql-outbox.messages';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import { loadDataLayer } from '../load-data-layer';
import type { DataLayerOptions } from '../data-layer.port';
import { carryToCommit } from '../pg/commit-carrier';
import { isPgClient } from '../pg/pg-transaction';

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

interface DrizzleMySqlCore {
  MySqlDatabase: unknown;
  MySqlTransaction: unknown;
}

export function isDrizzle(value: object): value is DrizzleTransactionLike {
  const candidate = value as Partial<DrizzleTransactionLike> & { select?: unknown };
  return typeof candidate.execute === 'function' && typeof candidate.transaction === 'function' && typeof candidate.select === 'function';
}

/**
 * A Drizzle transaction (`db.transaction(async (tx) => …)`) on PostgreSQL (any pg driver) or
 * MySQL/MariaDB (mysql2). The SQL goes through `tx.execute` as a Drizzle `sql` object, its values
 * as parameters, which Drizzle numbers again in the order they appear.
 */
export function drizzleTransaction(tx: DrizzleTransactionLike, { writeWithCommit = true }: Pick<DataLayerOptions, 'writeWithCommit'> = {}): SqlTransaction {
  const drizzle = loadDataLayer<DrizzleModule>('drizzle-orm', 'drizzle');
  const pg = loadDataLayer<DrizzlePgCore>('drizzle-orm/pg-core', 'drizzle');
  if (drizzle.is(tx, pg.PgDatabase)) {
    const transaction = drizzleOn('postgres', tx, drizzle, pg.PgTransaction);
    const client = writeWithCommit ? nodePostgresClientOf(tx) : undefined;
    return client ? { ...transaction, executeWithCommit: (sql, params) => carryToCommit(client, { text: sql, values: params }) } : transaction;
  }
  const mysql = loadDataLayer<DrizzleMySqlCore>('drizzle-orm/mysql-core', 'drizzle');
  if (drizzle.is(tx, mysql.MySqlDatabase)) return drizzleOn('mariadb', tx, drizzle, mysql.MySqlTransaction);
  const kind = (tx.constructor as unknown as Record<symbol, unknown> | undefined)?.[drizzle.entityKind];
  throw new OutboxWriteError(unknownDialect('drizzle', String(kind ?? 'unknown'), 'PostgreSQL, MariaDB/MySQL'));
}

function drizzleOn(dialect: 'postgres' | 'mariadb', tx: DrizzleTransactionLike, drizzle: DrizzleModule, transactionClass: unknown): SqlTransaction {
  if (!drizzle.is(tx, transactionClass)) {
    throw new OutboxWriteError(notInTransaction('drizzle', 'a Drizzle database', 'Pass the transaction: db.transaction(async (tx) => outbox.add(tx, ...)).'));
  }
  const { sql } = drizzle;
  const split = dialect === 'postgres' ? splitPlaceholders : splitQuestionMarks;
  const run = (text: string, params: readonly unknown[]) =>
    tx.execute(sql.join(split(text, params).map((part) => ('text' in part ? sql.raw(part.text) : sql.param(part.value)))));
  return {
    dialect,
    layer: 'drizzle',
    owner: tx,
    query: async (text, params) => resultOf(dialect, await run(text, params)).rows,
    execute: async (text, params) => resultOf(dialect, await run(text, params)).affected,
  };
}

/**
 * The node-postgres client under a Drizzle transaction (`drizzle-orm/node-postgres` keeps it as its
 * session's `client`), whose COMMIT can carry the outbox's statements; none for other drivers
 * (postgres.js, Neon, PGlite), whose statements then run when written.
 */
function nodePostgresClientOf(tx: DrizzleTransactionLike): object | undefined {
  const client = (tx as { session?: { client?: unknown } }).session?.client;
  return typeof client === 'object' && client !== null && isPgClient(client) ? client : undefined;
}

/**
 * node-postgres answers with a result object, postgres.js with the rows themselves, mysql2 with
 * `[rows or ResultSetHeader, fields]`.
 */
function resultOf(dialect: 'postgres' | 'mariadb', result: unknown): { rows: Record<string, unknown>[]; affected?: number } {
  // mysql2's fields are an array for a SELECT and undefined for an INSERT; its ResultSetHeader has affectedRows.
  if (dialect === 'mariadb' && Array.isArray(result)) {
    const [first] = result as [unknown];
    return Array.isArray(first) ? { rows: first as Record<string, unknown>[] } : { rows: [], affected: (first as { affectedRows?: number } | undefined)?.affectedRows };
  }
  if (Array.isArray(result)) return { rows: result as Record<string, unknown>[] };
  const { rows, rowCount } = (result ?? {}) as { rows?: Record<string, unknown>[]; rowCount?: number | null };
  return { rows: rows ?? [], affected: rowCount ?? undefined };
}
