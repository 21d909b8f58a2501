import { SqlPoisonStore } from '../sql/poison/sql-poison.store';
import type { SqlConnection } from '../core/sql-connection.port';

/** The poison records as the CLI reads and changes them: never inside a handler's transaction. */
export function cliPoisonStore(connection: SqlConnection, tableName: string, inboxTableName: string): SqlPoisonStore<never> {
  return new SqlPoisonStore<never>(connection, tableName, inboxTableName, () => Promise.reject(new Error('nest-outbox runs no handler transactions')));
}
