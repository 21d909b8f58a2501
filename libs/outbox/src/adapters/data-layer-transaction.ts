import { OutboxWriteError } from '../core/outbox.errors';
import { notInTransaction, unknownTransaction } from '../sql/sql-outbox.messages';
import { isSqlTransaction, type SqlTransaction } from '../core/sql-transaction.port';
import { PLAIN_DATA_LAYER_OPTIONS, type DataLayerAdapter, type DataLayerOptions } from './data-layer.port';
import { drizzleTransaction, isDrizzle, type DrizzleTransactionLike } from './drizzle/drizzle-transaction';
import { isKysely, kyselyTransaction, type KyselyTransactionLike } from './kysely/kysely-transaction';
import { isMikroOrmEntityManager, mikroOrmTransaction, type MikroOrmEntityManagerLike } from './mikro-orm/mikro-orm-transaction';
import { isPgClient, isPgPool, pgTransaction, type PgClientLike } from './pg/pg-transaction';
import { isPrismaClient, prismaTransaction, type PrismaTransactionLike } from './prisma/prisma-transaction';
import { typeOrmDataLayer } from './typeorm/typeorm-transaction';

/**
 * A transaction of a data layer other than TypeORM, as its own API hands it out. Typed by shape:
 * the library imports none of these packages' types, so an app needs only the layer it uses.
 * (TypeORM's EntityManager is accepted too: the methods that take it name its type apart.)
 */
export type OutboxDataLayerTransaction =
  | PrismaTransactionLike
  | DrizzleTransactionLike
  | KyselyTransactionLike
  | MikroOrmEntityManagerLike
  | PgClientLike
  | SqlTransaction;

/**
 * The data layers a transaction object is recognized as, by shape: one entry each, tried in this
 * order. Where shapes overlap the narrower test goes first: a MikroORM EntityManager also has
 * `execute`, so it comes before Drizzle. A new data layer is one more entry here (and its adapter
 * folder beside this file).
 */
const DATA_LAYERS: readonly DataLayerAdapter[] = [
  typeOrmDataLayer,
  { listed: { as: 'your own SqlTransaction ({ dialect, layer, query })', at: 7 }, matches: isSqlTransaction, toSql: (value) => value as SqlTransaction },
  { listed: { as: 'a Prisma interactive transaction client (prisma.$transaction(async (tx) => ...))', at: 2 }, matches: isPrismaClient, toSql: (value) => prismaTransaction(value as PrismaTransactionLike) },
  { listed: { as: 'a Kysely Transaction (db.transaction().execute(async (trx) => ...))', at: 4 }, matches: isKysely, toSql: (value) => kyselyTransaction(value as KyselyTransactionLike) },
  { listed: { as: 'a MikroORM EntityManager inside em.transactional(...)', at: 5 }, matches: isMikroOrmEntityManager, toSql: (value) => mikroOrmTransaction(value as MikroOrmEntityManagerLike) },
  { listed: { as: 'a Drizzle transaction (db.transaction(async (tx) => ...))', at: 3 }, matches: isDrizzle, toSql: (value, options) => drizzleTransaction(value as DrizzleTransactionLike, options) },
  { listed: { as: 'a node-postgres client after BEGIN (pg >= 8.21)', at: 6 }, matches: isPgClient, toSql: (value, options) => pgTransaction(value as PgClientLike, options) },
  // A pool is no transaction: recognized only to say what to pass instead.
  {
    matches: isPgPool,
    toSql: () => {
      throw new OutboxWriteError(notInTransaction('pg', 'a Pool', 'Take a client with pool.connect(), run BEGIN on it, and pass that client.'));
    },
  },
];

/** What a transaction argument may be, for the refusal of anything else. */
export const ACCEPTED_TRANSACTIONS: readonly string[] = DATA_LAYERS.flatMap((entry) => (entry.listed ? [entry.listed] : []))
  .sort((a, b) => a.at - b.at)
  .map((listed) => listed.as);

/** A module's way from any data layer's transaction object to the writer's `SqlTransaction`: `toSqlTransaction` with its options. */
export type SqlTransactionOf = (transaction: unknown) => SqlTransaction;

/** Whether `value` looks like a transaction of one of the data layers above (checked further by `toSqlTransaction`). */
export function isDataLayerTransaction(value: unknown): value is OutboxDataLayerTransaction {
  return value !== null && typeof value === 'object' && DATA_LAYERS.some((entry) => entry.matches(value));
}

/**
 * The `SqlTransaction` of a data layer's transaction object, found by its shape. Refuses an object
 * that is not inside a transaction, and one of no known layer, listing what is accepted. Without a
 * module's `options`, statements run plain and no transaction is followed.
 */
export function toSqlTransaction(value: unknown, options: DataLayerOptions = PLAIN_DATA_LAYER_OPTIONS): SqlTransaction {
  const entry = value !== null && typeof value === 'object' ? DATA_LAYERS.find((candidate) => candidate.matches(value)) : undefined;
  if (entry) return entry.toSql(value as object, options);
  throw new OutboxWriteError(unknownTransaction(describe(value), ACCEPTED_TRANSACTIONS));
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value === null ? 'null' : typeof value);
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `an object of class ${name}` : 'a plain object';
}
