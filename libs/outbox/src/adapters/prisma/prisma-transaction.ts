import { OutboxWriteError } from '../../core/outbox.errors';
import { notInTransaction, unknownDialect } from '../../sql/sql-outbox.messages';
import type { SqlDialectName, SqlTransaction } from '../../core/sql-transaction.port';

/** The part of Prisma's interactive transaction client (`prisma.$transaction(async (tx) => …)`) used here. */
export interface PrismaTransactionLike {
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
}

export function isPrismaClient(value: object): value is PrismaTransactionLike {
  const candidate = value as Partial<PrismaTransactionLike>;
  return typeof candidate.$queryRawUnsafe === 'function' && typeof candidate.$executeRawUnsafe === 'function';
}

// Prisma's provider names; `mysql` also covers MariaDB (with @prisma/adapter-mariadb).
const DIALECTS: Record<string, SqlDialectName> = { postgresql: 'postgres', sqlite: 'sqlite', mysql: 'mariadb' };

/**
 * Prisma's transaction client is the client without `$connect`/`$disconnect` (Prisma 7 keeps
 * `$transaction` on it, for nested transactions): the root client's raw queries would each run in
 * a transaction of their own.
 */
export function prismaTransaction(tx: PrismaTransactionLike): SqlTransaction {
  if (typeof (tx as { $connect?: unknown }).$connect === 'function') {
    throw new OutboxWriteError(notInTransaction('prisma', 'the PrismaClient itself', 'Pass the client of an interactive transaction: prisma.$transaction(async (tx) => outbox.add(tx, ...)).'));
  }
  const provider = String((tx as { _activeProvider?: unknown })._activeProvider);
  const dialect = DIALECTS[provider];
  if (!dialect) throw new OutboxWriteError(unknownDialect('prisma', provider));
  return {
    dialect,
    layer: 'prisma',
    owner: tx,
    query: async (sql, params) => (await tx.$queryRawUnsafe<Record<string, unknown>[]>(sql, ...params)) ?? [],
    execute: async (sql, params) => tx.$executeRawUnsafe(sql, ...params),
  };
}
