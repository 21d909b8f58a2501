import type { DataSource } from 'typeorm';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { outboxMessageEntity } from './outbox-message.entity';
import {
  createSqlOutboxConsoleStore,
  createSqlOutboxMaintenanceStore,
  createSqlOutboxStatsSource,
  createSqlOutboxStore,
  dialectFor,
  tableDialectFor,
} from './outbox-sql.factory';
import { createOutboxTableMigration } from './create-outbox-table.migration';

describe('exported entry points that take a table name', () => {
  const query = jest.fn();
  // A data source that would record any statement: none may run for a bad name.
  const dataSource = { options: { type: 'postgres' }, query, createQueryRunner: query, manager: { query } } as unknown as DataSource;
  const injection = 'outbox_messages; DROP TABLE orders; --';

  it.each([
    ['createSqlOutboxStore', () => createSqlOutboxStore(dataSource, injection)],
    ['createSqlOutboxMaintenanceStore', () => createSqlOutboxMaintenanceStore(dataSource, injection)],
    ['createSqlOutboxStatsSource', () => createSqlOutboxStatsSource(dataSource, injection)],
    ['createSqlOutboxConsoleStore', () => createSqlOutboxConsoleStore(dataSource, injection)],
    ['dialectFor', () => dialectFor('postgres', injection)],
    ['tableDialectFor', () => tableDialectFor('mariadb', injection)],
    ['outboxMessageEntity', () => outboxMessageEntity(injection)],
    ['createOutboxTableMigration', () => createOutboxTableMigration(injection)],
  ])('%s refuses an injection attempt before any SQL runs', (_, call) => {
    expect(call).toThrow(OutboxConfigurationError);
    expect(call).toThrow('"tableName": expected an identifier');
    expect(query).not.toHaveBeenCalled();
  });
});
