import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateOutboxTable } from '@nest-outbox/outbox';
import { createSqlOutboxStore } from '@nest-outbox/outbox/typeorm';
import type { OutboxStoreContractSubject } from '@nest-outbox/outbox/testing';
// The writer's own insert statement: what the outbox writes in production, without the Nest module around it.
import { tableDialectFor } from '../../libs/outbox/src/typeorm/outbox-sql.factory';
import { isolatedDatabase, type TestDatabase } from './outbox-harness';

const TABLE = 'outbox_messages';

/** The library's SQL store on a private database (schema, database or file) per test, for the store contract suite. */
export function sqlStoreSubject(database: TestDatabase, deadLetterPolicy: 'hold' | 'skip' = 'hold'): OutboxStoreContractSubject {
  return {
    name: `SQL store on ${database} (dead letters: ${deadLetterPolicy})`,
    deadLetterPolicy,
    createStore: async () => {
      const isolated = await isolatedDatabase(database);
      const dataSource = new DataSource({ ...isolated.options, migrations: [CreateOutboxTable], migrationsRun: true, logging: false } as DataSourceOptions);
      try {
        await dataSource.initialize();
      } catch (error) {
        await isolated.drop();
        throw error;
      }
      const dialect = tableDialectFor(dataSource.options.type, TABLE);
      return {
        store: createSqlOutboxStore(dataSource, TABLE, { deadLetterPolicy }),
        write: async (messages) => {
          const { sql, params } = dialect.insert(messages, { notify: false });
          await dataSource.transaction((manager) => manager.query(sql, params));
        },
        close: async () => {
          await dataSource.destroy();
          await isolated.drop();
        },
      };
    },
  };
}
