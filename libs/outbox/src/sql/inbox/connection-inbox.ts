import { TransactionalInbox } from '../../core/inbox/transactional-inbox';
import type { ResolvedPoisonSettings } from '../../core/poison/poison-settings';
import { PoisonPolicy } from '../../core/poison/poison-policy';
import { driverTypeOf, type SqlConnection, type SqlSession } from '../../core/sql-connection.port';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import { SqlPoisonStore } from '../poison/sql-poison.store';
import { inboxDialectFor } from './inbox-sql.dialect';

/** The sessions behind the transactions handed out, for the mark (MariaDB reports an insert as a count, not a row). */
const sessions = new WeakMap<SqlTransaction, SqlSession>();

/**
 * A transaction the inbox opened on its `connection`, as the `SqlTransaction` every data-layer entry
 * point takes: `OutboxPublisher.add(tx, …)` writes in it, and `tx.query(sql, params)` runs the
 * handler's own statements in it (the dialect's placeholders). Writes made anywhere else (another
 * pool, an ORM's own transaction) are not part of it.
 */
function toTransaction(connection: SqlConnection, session: SqlSession): SqlTransaction {
  const transaction: SqlTransaction = {
    dialect: connection.dialect,
    layer: `nest-outbox inbox on ${connection.layer}`,
    query: async (sql, params) => (await session({ sql, params: [...params] })).records,
    execute: async (sql, params) => void (await session({ sql, params: [...params] })),
  };
  sessions.set(transaction, session);
  return transaction;
}

/** The inbox of `OutboxInboxModule.forRoot({ connection })`: its transactions are the connection's own short ones. */
export function connectionInbox(
  connection: SqlConnection,
  tables: { inbox: string; poison: string },
  poison: ResolvedPoisonSettings | undefined,
): { inbox: TransactionalInbox<SqlTransaction>; poisonStore?: SqlPoisonStore<SqlTransaction> } {
  const dialect = inboxDialectFor(driverTypeOf(connection.dialect), tables.inbox);
  const marker = {
    mark: async (transaction: SqlTransaction, consumer: string, messageId: string) =>
      dialect.inserted(await sessions.get(transaction)!({ sql: dialect.mark, params: [consumer, messageId] })),
  };
  const poisonStore = poison ? new SqlPoisonStore<SqlTransaction>(connection, tables.poison, tables.inbox, (transaction, { sql, params }) => transaction.query(sql, params)) : undefined;
  const policy = poisonStore && poison ? new PoisonPolicy(poisonStore, poison) : undefined;
  const inbox = new TransactionalInbox<SqlTransaction>(marker, (work) => connection.transaction((session) => work(toTransaction(connection, session))), policy);
  return { inbox, poisonStore };
}
