import type { DataSource, EntityManager } from 'typeorm';
import { SqlPoisonStore } from '../../sql/poison/sql-poison.store';
import { TypeOrmSqlConnection } from '../typeorm-sql.connection';

/** The poison table of one data source; `claim` and `unmark` run through the handler's EntityManager. */
export class TypeOrmPoisonStore extends SqlPoisonStore<EntityManager> {
  constructor(dataSource: DataSource, tableName: string, inboxTableName: string) {
    super(new TypeOrmSqlConnection(dataSource), tableName, inboxTableName, async (manager, { sql, params }) => {
      const result = await manager.queryRunner!.query(sql, params, true);
      return Array.isArray(result.records) ? result.records : [];
    });
  }
}
