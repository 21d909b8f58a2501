/** The SQL families the outbox writer speaks; each has its own placeholders and locks. */
export type SqlDialectName = 'postgres' | 'mariadb' | 'sqlite';

/**
 * A statement runner inside a transaction the caller opened and will end: what the outbox needs of
 * any data layer to write its rows with the caller's data. `sql` uses the dialect's own
 * placeholders (`$1` on PostgreSQL, `?` on SQLite and MariaDB).
 */
export interface SqlTransaction {
  readonly dialect: SqlDialectName;
  /** The data layer, for messages: `pg`, `prisma`, `drizzle`, `kysely`, `mikro-orm`, or your own name. */
  readonly layer: string;
  /**
   * The data layer's own transaction object, when there is one: writes through the same object run
   * one after another, in call order, as statements on one connection must. Default: this object.
   */
  readonly owner?: object;
  /** Runs a statement and returns its rows. */
  query(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Runs a statement whose rows are not needed (the outbox INSERT). Apart because some layers
   * decode every column of a result, and refuse types they do not know (Prisma and `pg_notify`'s `void`).
   * On MariaDB/MySQL it must resolve with the number of rows the statement changed: an INSERT
   * returns no rows there, and `OutboxDataLayerInbox` learns from that number whether it recorded the message.
   */
  execute(sql: string, params: readonly unknown[]): Promise<number | void>;
  /**
   * Optional: holds back a statement whose rows and count are not needed, to be sent with the
   * transaction's COMMIT in one network write, so that it costs no round trip of its own; a failure
   * of it fails the COMMIT, and nothing commits. Returns false when it cannot (the caller then
   * executes it). node-postgres' client can (see adapters/pg/commit-carrier.ts); absent, every
   * statement runs when written.
   */
  executeWithCommit?(sql: string, params: readonly unknown[]): boolean;
  /**
   * PostgreSQL: what the transaction knows of the relay's wake-up notification. Given, an INSERT
   * carries it only while `needed()` says so; absent (the default), every INSERT carries it, which
   * PostgreSQL folds into one per transaction at commit but which costs each INSERT a CTE.
   */
  readonly notifications?: SqlTransactionNotifications;
}

/** The transaction's own record of the notification: a data layer that follows its transactions can send it once. */
export interface SqlTransactionNotifications {
  /** Whether the next INSERT should carry the notification: none sent yet, or the savepoint that sent it rolled back. */
  needed(): boolean;
  /** Called after an INSERT that carried it ran. */
  sent(): void;
}

/** Shape check for a hand-written `SqlTransaction`, so that one can be passed where a data layer's transaction is. */
export function isSqlTransaction(value: unknown): value is SqlTransaction {
  const candidate = value as Partial<SqlTransaction> | null | undefined;
  return (
    typeof candidate?.query === 'function' &&
    typeof candidate.execute === 'function' &&
    typeof candidate.layer === 'string' &&
    (candidate.dialect === 'postgres' || candidate.dialect === 'mariadb' || candidate.dialect === 'sqlite')
  );
}

/** Runs a statement whose rows are not needed with the COMMIT where the data layer can carry it there (one round trip fewer), else now. */
export async function executeAtCommitOrNow(transaction: SqlTransaction, sql: string, params: readonly unknown[]): Promise<void> {
  if (transaction.executeWithCommit?.(sql, params)) return;
  await transaction.execute(sql, params);
}
