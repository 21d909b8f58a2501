import { OutboxWriteError } from '../../core/outbox.errors';
import { notInTransaction, unknownDialect } from '../../sql/sql-outbox.messages';
import type { SqlDialectName, SqlTransaction } from '../../core/sql-transaction.port';
import { loadDataLayer } from '../load-data-layer';

interface CompiledQueryLike {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** The part of a Kysely `Transaction` used here (MikroORM's transaction context is one too). */
export interface KyselyTransactionLike {
  readonly isTransaction: boolean;
  executeQuery(query: any): Promise<{ rows: unknown[]; numAffectedRows?: bigint }>;
  selectNoFrom(selection: any): { compile(): CompiledQueryLike };
}

interface KyselyModule {
  CompiledQuery: { raw(sql: string, parameters?: unknown[]): CompiledQueryLike };
}

export function isKysely(value: object): value is KyselyTransactionLike {
  const candidate = value as Partial<KyselyTransactionLike>;
  return typeof candidate.executeQuery === 'function' && typeof candidate.isTransaction === 'boolean';
}

/**
 * A Kysely `Transaction` (`db.transaction().execute(async (trx) => …)`, or a controlled one).
 * `layer` names who opened it, for messages: MikroORM hands out Kysely transactions too.
 */
export function kyselyTransaction(trx: KyselyTransactionLike, layer = 'kysely'): SqlTransaction {
  if (!trx.isTransaction) {
    throw new OutboxWriteError(notInTransaction(layer, 'a Kysely instance', 'Pass the transaction: db.transaction().execute(async (trx) => outbox.add(trx, ...)).'));
  }
  const { CompiledQuery } = loadDataLayer<KyselyModule>('kysely', layer);
  const run = (sql: string, params: readonly unknown[]) => trx.executeQuery(CompiledQuery.raw(sql, [...params]));
  return {
    dialect: dialectOf(trx, layer),
    layer,
    owner: trx,
    query: async (sql, params) => (await run(sql, params)).rows as Record<string, unknown>[],
    // MariaDB/MySQL report the rows an INSERT changed here (a bigint), not as rows.
    execute: async (sql, params) => {
      const changed = (await run(sql, params)).numAffectedRows;
      return changed === undefined ? undefined : Number(changed);
    },
  };
}

/** Read from how the transaction's own compiler writes a parameter and a name: no query is sent. */
function dialectOf(trx: KyselyTransactionLike, layer: string): SqlDialectName {
  const sql = trx.selectNoFrom((eb: { val(value: number): { as(name: string): unknown } }) => eb.val(1).as('probe')).compile().sql;
  if (sql.includes('$1')) return 'postgres';
  if (sql.includes('`probe`')) return 'mariadb';
  if (sql.includes('"probe"')) return 'sqlite';
  throw new OutboxWriteError(unknownDialect(layer, sql));
}
