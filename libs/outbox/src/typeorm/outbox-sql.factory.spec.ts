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

describe('exported entry points that take a schema', () => {
  const query = jest.fn();
  const dataSource = { options: { type: 'postgres' }, query, createQueryRunner: query, manager: { query } } as unknown as DataSource;
  const injected = { tableName: 'outbox_messages', schema: 'public"; DROP TABLE orders; --' };

  it.each([
    ['createSqlOutboxStore', () => createSqlOutboxStore(dataSource, injected)],
    ['createSqlOutboxMaintenanceStore', () => createSqlOutboxMaintenanceStore(dataSource, injected)],
    ['createSqlOutboxStatsSource', () => createSqlOutboxStatsSource(dataSource, injected)],
    ['createSqlOutboxConsoleStore', () => createSqlOutboxConsoleStore(dataSource, injected)],
    ['dialectFor', () => dialectFor('postgres', injected)],
    ['outboxMessageEntity', () => outboxMessageEntity(injected)],
    ['createOutboxTableMigration', () => createOutboxTableMigration(injected)],
  ])('%s refuses an injection attempt before any SQL runs', (_, call) => {
    expect(call).toThrow(OutboxConfigurationError);
    expect(call).toThrow('"schema": expected an identifier');
    expect(query).not.toHaveBeenCalled();
  });

  it.each([
    ['better-sqlite3', 'createSqlOutboxStore', (ds: DataSource) => createSqlOutboxStore(ds, { tableName: 'outbox_messages', schema: 'billing' })],
    ['mariadb', 'createSqlOutboxStatsSource', (ds: DataSource) => createSqlOutboxStatsSource(ds, { tableName: 'outbox_messages', schema: 'billing' })],
    ['mysql', 'createSqlOutboxConsoleStore', (ds: DataSource) => createSqlOutboxConsoleStore(ds, { tableName: 'outbox_messages', schema: 'billing' })],
  ])('on %s, %s refuses a schema, naming the option', (type, _, call) => {
    const other = { options: { type }, query, createQueryRunner: query, manager: { query } } as unknown as DataSource;
    expect(() => call(other)).toThrow(/option "schema" \("billing"\): a schema is supported on PostgreSQL only/);
    expect(query).not.toHaveBeenCalled();
  });
});
