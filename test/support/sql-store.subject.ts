import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateOutboxTable } from '@nest-outbox/outbox';
import { createOutboxTableMigration, createSqlOutboxStore } from '@nest-outbox/outbox/typeorm';
import type { OutboxStoreContractSubject } from '@nest-outbox/outbox/testing';
import type { NewOutboxMessage, OutboxPartitioning } from '@nest-outbox/outbox/core';
// The writer's own insert statement: what the outbox writes in production, without the Nest module around it.
import { tableDialectFor } from '../../libs/outbox/src/typeorm/outbox-sql.factory';
// The WAL mode's way into the table: what its stream moves there when a message keeps failing.
import { TableOverflow } from '../../libs/outbox/src/wal/table-overflow';
import { sqlConnectionOf } from '../../libs/outbox/src/typeorm/typeorm-sql.connection';
import { isolatedDatabase, type TestDatabase } from './outbox-harness';
import { asMoved } from './wal-overflow.writer';

const TABLE = 'outbox_messages';

/** The library's SQL store on a private database (schema, database or file) per test, for the store contract suite. */
export function sqlStoreSubject(
  database: TestDatabase,
  deadLetterPolicy: 'hold' | 'skip' = 'hold',
  writer: 'writer' | 'wal-overflow' = 'writer',
  partitioning?: OutboxPartitioning,
): OutboxStoreContractSubject {
  const migration = partitioning ? createOutboxTableMigration({ tableName: TABLE, partitioning }) : CreateOutboxTable;
  return {
    name: `SQL store on ${database} (dead letters: ${deadLetterPolicy})${writer === 'wal-overflow' ? ', rows written by the WAL stream\'s overflow' : ''}${partitioning ? `, table partitioned by ${partitioning.interval}` : ''}`,
    deadLetterPolicy,
    createStore: async () => {
      const isolated = await isolatedDatabase(database);
      const dataSource = new DataSource({ ...isolated.options, migrations: [migration], migrationsRun: true, logging: false } as DataSourceOptions);
      try {
        await dataSource.initialize();
      } catch (error) {
        await isolated.drop();
        throw error;
      }
      const dialect = tableDialectFor(dataSource.options.type, TABLE);
      const overflow = new TableOverflow(sqlConnectionOf(dataSource), TABLE, { deadLetterPolicy });
      return {
        store: createSqlOutboxStore(dataSource, TABLE, { deadLetterPolicy }),
        write: async (messages) => {
          if (writer === 'wal-overflow') {
            // As the stream moves them: in order, unattempted, each run of one delay in one move.
            for (const run of runsOfOneDelay(messages)) {
              await overflow.divert(asMoved(run, 'moved by the contract'), run[0].delayMs ?? 0);
            }
            return;
          }
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

function runsOfOneDelay(messages: NewOutboxMessage[]): NewOutboxMessage[][] {
  const runs: NewOutboxMessage[][] = [];
  for (const message of messages) {
    const last = runs.at(-1);
    if (last && last[0].delayMs === message.delayMs) last.push(message);
    else runs.push([message]);
  }
  return runs;
}
