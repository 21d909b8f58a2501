import type { SqlConnection } from '../../core/sql-connection.port';
import { driverTypeOf } from '../../core/sql-connection.port';
import { inboxDialectFor, type InboxSqlDialect } from './inbox-sql.dialect';

/** The inbox table's upkeep on a connection of its own: the startup probe and the pruning of old marks. */
export class SqlInboxStore {
  private readonly dialect: InboxSqlDialect;

  constructor(
    private readonly connection: SqlConnection,
    readonly tableName: string,
  ) {
    this.dialect = inboxDialectFor(driverTypeOf(connection.dialect), tableName);
  }

  /** Fails when the table is missing. */
  async probe(): Promise<void> {
    await this.connection.run({ sql: this.dialect.probe, params: [] });
  }

  async prune(olderThanMs: number, limit: number): Promise<number> {
    return this.dialect.pruned(await this.connection.run({ sql: this.dialect.prune, params: [olderThanMs, limit] }));
  }
}
