import { OutboxWriteError } from '../../core/outbox.errors';
import { notInTransaction } from '../../sql/sql-outbox.messages';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import { isKysely, kyselyTransaction } from '../kysely/kysely-transaction';

/** The part of a MikroORM `EntityManager` used here. */
export interface MikroOrmEntityManagerLike {
  isInTransaction(): boolean;
  getTransactionContext(): unknown;
}

export function isMikroOrmEntityManager(value: object): value is MikroOrmEntityManagerLike {
  const candidate = value as Partial<MikroOrmEntityManagerLike>;
  return typeof candidate.isInTransaction === 'function' && typeof candidate.getTransactionContext === 'function';
}

/**
 * The EntityManager `em.transactional(async (em) => …)` hands its callback (or a fork inside
 * `em.begin()`). MikroORM 7's SQL drivers run on Kysely: the transaction context is a Kysely
 * transaction, through which the rows are written with bound parameters; MikroORM's own
 * `execute` would inline them into the SQL text instead.
 */
export function mikroOrmTransaction(em: MikroOrmEntityManagerLike): SqlTransaction {
  const context = em.getTransactionContext();
  if (!em.isInTransaction() || context === null || typeof context !== 'object') {
    throw new OutboxWriteError(notInTransaction('mikro-orm', 'an EntityManager', 'Pass the EntityManager of a transaction: em.transactional(async (em) => outbox.add(em, ...)).'));
  }
  if (!isKysely(context)) {
    throw new OutboxWriteError(notInTransaction('mikro-orm', 'an EntityManager whose transaction is no SQL one', 'Use a MikroORM 7 SQL driver (@mikro-orm/postgresql, @mikro-orm/mysql, @mikro-orm/mariadb or @mikro-orm/sqlite).'));
  }
  return kyselyTransaction(context, 'mikro-orm');
}
