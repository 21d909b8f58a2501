import type { DataSource, EntityManager } from 'typeorm';
import type { InboxStore } from '../../core/inbox/inbox.port';
import { runnerFor } from '../sql-runners';
import { inboxDialectFor, type InboxSqlDialect } from '../../sql/inbox/inbox-sql.dialect';

/** The inbox table of one data source, written through the handler's own EntityManager. */
export class TypeOrmInboxStore implements InboxStore<EntityManager> {
  private readonly dialect: InboxSqlDialect;

  constructor(
    private readonly dataSource: DataSource,
    readonly tableName: string,
  ) {
    this.dialect = inboxDialectFor(dataSource.options.type, tableName);
  }

  async mark(manager: EntityManager, consumer: string, messageId: string): Promise<boolean> {
    const result = await manager.queryRunner!.query(this.dialect.mark, [consumer, messageId], true);
    return this.dialect.inserted(result);
  }

  /** Fails when the table is missing. */
  async probe(): Promise<void> {
    await this.dataSource.query(this.dialect.probe);
  }

  async prune(olderThanMs: number, limit: number): Promise<number> {
    if (this.dataSource.options.type === 'better-sqlite3') {
      // One shared connection: prune between the application's transactions, never inside one.
      return (await runnerFor(this.dataSource).rows({ sql: this.dialect.prune, params: [olderThanMs, limit] })).length;
    }
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      return this.dialect.pruned(await queryRunner.query(this.dialect.prune, [olderThanMs, limit], true));
    } finally {
      await queryRunner.release();
    }
  }
}
