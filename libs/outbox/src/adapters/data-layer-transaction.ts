import { OutboxWriteError } from '../core/outbox.errors';
import { notInTransaction, unknownTransaction } from '../sql/sql-outbox.messages';
import { isSqlTransaction, type SqlTransaction } from '../core/sql-transaction.port';
import { drizzleTransaction, isDrizzle, type DrizzleTransactionLike } from './drizzle/drizzle-transaction';
import { isKysely, kyselyTransaction, type KyselyTransactionLike } from './kysely/kysely-transaction';
import { isMikroOrmEntityManager, mikroOrmTransaction, type MikroOrmEntityManagerLike } from './mikro-orm/mikro-orm-transaction';
import { isPgClient, isPgPool, pgTransaction, type PgClientLike } from './pg/pg-transaction';
import { isPrismaClient, prismaTransaction, type PrismaTransactionLike } from './prisma/prisma-transaction';

/**
 * A transaction of a data layer other than TypeORM, as its own API hands it out. Typed by shape:
 * the library imports none of these packages' types, so an app needs only the layer it uses.
 */
export type OutboxDataLayerTransaction =
  | PrismaTransactionLike
  | DrizzleTransactionLike
  | KyselyTransactionLike
  | MikroOrmEntityManagerLike
  | PgClientLike
  | SqlTransaction;

export const ACCEPTED_TRANSACTIONS = [
  'a TypeORM EntityManager in a transaction',
  'a Prisma interactive transaction client (prisma.$transaction(async (tx) => ...))',
  'a Drizzle transaction (db.transaction(async (tx) => ...))',
  'a Kysely Transaction (db.transaction().execute(async (trx) => ...))',
  'a MikroORM EntityManager inside em.transactional(...)',
  "a node-postgres client after BEGIN (pg >= 8.21)",
  'your own SqlTransaction ({ dialect, layer, query })',
] as const;

/** Whether `value` looks like a transaction of one of the data layers above (checked further by `toSqlTransaction`). */
export function isDataLayerTransaction(value: unknown): value is OutboxDataLayerTransaction {
  if (value === null || typeof value !== 'object') return false;
  return (
    isSqlTransaction(value) ||
    isPrismaClient(value) ||
    isKysely(value) ||
    isMikroOrmEntityManager(value) ||
    isDrizzle(value) ||
    isPgClient(value) ||
    isPgPool(value)
  );
}

/**
 * The `SqlTransaction` of a data layer's transaction object, found by its shape (an app may load
 * its own copy of each package, so no `instanceof`). Refuses an object that is not inside a
 * transaction, and one of no known layer, listing what is accepted.
 */
export function toSqlTransaction(value: unknown): SqlTransaction {
  if (value !== null && typeof value === 'object') {
    // Where shapes overlap the narrower test goes first: a MikroORM EntityManager also has `execute`, checked before Drizzle's.
    if (isSqlTransaction(value)) return value;
    if (isPrismaClient(value)) return prismaTransaction(value);
    if (isKysely(value)) return kyselyTransaction(value);
    if (isMikroOrmEntityManager(value)) return mikroOrmTransaction(value);
    if (isDrizzle(value)) return drizzleTransaction(value);
    if (isPgClient(value)) return pgTransaction(value);
    if (isPgPool(value)) {
      throw new OutboxWriteError(notInTransaction('pg', 'a Pool', "Take a client with pool.connect(), run BEGIN on it, and pass that client."));
    }
  }
  throw new OutboxWriteError(unknownTransaction(describe(value), ACCEPTED_TRANSACTIONS));
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value === null ? 'null' : typeof value);
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `an object of class ${name}` : 'a plain object';
}
