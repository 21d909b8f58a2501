import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import * as root from '@nest-outbox/outbox';
import { OutboxConfigurationError } from '@nest-outbox/outbox';
import * as core from '@nest-outbox/outbox/core';
import * as typeorm from '@nest-outbox/outbox/typeorm';
import * as observability from '@nest-outbox/outbox/observability';
import * as consoleEntry from '@nest-outbox/outbox/console';
import * as testing from '@nest-outbox/outbox/testing';
import { createSqlOutboxConsoleStore } from '../libs/outbox/src/typeorm/outbox-sql.factory';
import { walNames } from '../libs/outbox/src/wal/wal-names';

/** Every entry point of the package, and two internals the module feeds with names from its options. */
const outbox = { ...root, ...core, ...typeorm, ...observability, ...consoleEntry, ...testing, createSqlOutboxConsoleStore, walNames };

/**
 * Table and schema names go into SQL text. Every exported class, factory or module that takes one
 * must refuse anything but a plain identifier before it builds a statement; the list below is
 * checked against the exports of every entry point, so a new export that takes a name cannot be left out.
 */
const HOSTILE = 'victims"; DROP TABLE victims; --';

type Call = (dataSource: DataSource, name: string) => unknown;

/** Exports that take a table name, and how to hand them one. */
const takesTableName: Record<string, Call> = {
  outboxMessageEntity: (_, name) => outbox.outboxMessageEntity(name),
  createOutboxTableMigration: (_, name) => outbox.createOutboxTableMigration(name),
  createOutboxPausedTableMigration: (_, name) => outbox.createOutboxPausedTableMigration(name),
  createOutboxLocksTableMigration: (_, name) => outbox.createOutboxLocksTableMigration(name),
  createSqlOutboxStore: (dataSource, name) => outbox.createSqlOutboxStore(dataSource, name),
  createSqlOutboxMaintenanceStore: (dataSource, name) => outbox.createSqlOutboxMaintenanceStore(dataSource, name),
  createSqlOutboxPartitionStore: (dataSource, name) => outbox.createSqlOutboxPartitionStore(dataSource, name, { interval: 'day' }),
  createSqlOutboxStatsSource: (dataSource, name) => outbox.createSqlOutboxStatsSource(dataSource, name),
  createSqlOutboxConsoleStore: (dataSource, name) => outbox.createSqlOutboxConsoleStore(dataSource, name),
  TypeOrmInboxStore: (dataSource, name) => new outbox.TypeOrmInboxStore(dataSource, name).probe(),
  createInboxTableMigration: (dataSource, name) => new (outbox.createInboxTableMigration(name))().up(dataSource.createQueryRunner()),
  createOutboxPauseReasonMigration: (_, name) => outbox.createOutboxPauseReasonMigration(name),
  createInboxPoisonTableMigration: (dataSource, name) => new (outbox.createInboxPoisonTableMigration(name))().up(dataSource.createQueryRunner()),
  TypeOrmPoisonStore: (dataSource, name) => new outbox.TypeOrmPoisonStore(dataSource, name, 'outbox_inbox'),
  'TypeOrmPoisonStore (its inbox table)': (dataSource, name) => new outbox.TypeOrmPoisonStore(dataSource, 'outbox_inbox_poison', name),
  OutboxDataLayerInbox: (_, name) => new outbox.OutboxDataLayerInbox(name),
  OutboxModule: (_, name) => outbox.OutboxModule.forRoot({ relay: false, tableName: name }),
  OutboxInboxModule: (_, name) => outbox.OutboxInboxModule.forRoot({ tableName: name }),
  walNames: (_, name) => outbox.walNames({ tableName: name }),
  createOutboxPayloadsTableMigration: (_, name) => outbox.createOutboxPayloadsTableMigration(name),
  DatabasePayloadStore: (_, name) => new outbox.DatabasePayloadStore(name),
};

/** Exports that take a schema name too. */
const takesSchemaName: Record<string, Call> = {
  outboxMessageEntity: (_, schema) => outbox.outboxMessageEntity({ tableName: 'outbox_messages', schema }),
  createOutboxTableMigration: (_, schema) => outbox.createOutboxTableMigration({ tableName: 'outbox_messages', schema }),
  createOutboxPausedTableMigration: (_, schema) => outbox.createOutboxPausedTableMigration({ tableName: 'outbox_messages', schema }),
  createOutboxLocksTableMigration: (_, schema) => outbox.createOutboxLocksTableMigration({ tableName: 'outbox_messages', schema }),
  createSqlOutboxStore: (dataSource, schema) => outbox.createSqlOutboxStore(dataSource, { tableName: 'outbox_messages', schema }),
  createSqlOutboxMaintenanceStore: (dataSource, schema) => outbox.createSqlOutboxMaintenanceStore(dataSource, { tableName: 'outbox_messages', schema }),
  createSqlOutboxPartitionStore: (dataSource, schema) => outbox.createSqlOutboxPartitionStore(dataSource, { tableName: 'outbox_messages', schema }, { interval: 'day' }),
  createSqlOutboxStatsSource: (dataSource, schema) => outbox.createSqlOutboxStatsSource(dataSource, { tableName: 'outbox_messages', schema }),
  createSqlOutboxConsoleStore: (dataSource, schema) => outbox.createSqlOutboxConsoleStore(dataSource, { tableName: 'outbox_messages', schema }),
  createOutboxPauseReasonMigration: (_, schema) => outbox.createOutboxPauseReasonMigration({ tableName: 'outbox_messages', schema }),
  OutboxModule: (_, schema) => outbox.OutboxModule.forRoot({ relay: false, schema }),
  walNames: (_, schema) => outbox.walNames({ tableName: 'outbox_messages', schema }),
  createOutboxPayloadsTableMigration: (_, schema) => outbox.createOutboxPayloadsTableMigration({ tableName: 'outbox_messages', schema }),
  DatabasePayloadStore: (_, schema) => new outbox.DatabasePayloadStore({ tableName: 'outbox_messages', schema }),
};

/** Exports whose code mentions a table or schema but take no name from the caller, and why. */
const takesNoName: Record<string, string> = {
  CreateOutboxTable: 'the migration of the default table, no argument',
  AddOutboxPausedTable: 'the migration of the default table, no argument',
  CreateInboxTable: 'the migration of the default inbox table, no argument',
  TypeOrmInbox: 'takes a TypeOrmInboxStore, which checks the name',
  OutboxCleaner: 'takes a maintenance store, which checks the name',
  OutboxTestingModule: 'in memory, no table',
  OutboxConsoleModule: 'reads the table of the OutboxModule it sits beside, whose options check the name',
};

/** Whether an export may take a table or schema name: its own parameters say so, or it is a module. */
function mentionsAName(value: unknown): boolean {
  if (typeof value !== 'function') return false;
  const source = Function.prototype.toString.call(value);
  const parameters = source.startsWith('class') ? /constructor\s*\(([^)]*)\)/.exec(source)?.[1] ?? '' : /^[^(]*\(([^)]*)\)/.exec(source)?.[1] ?? '';
  // A module's options are a type, invisible here: every module is a candidate.
  const isModule = typeof (value as { forRoot?: unknown }).forRoot === 'function';
  return isModule || /\b(table|tableName|location|schema)\b/.test(parameters);
}

describe('table and schema names given to exported classes and factories', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-names-'));
    dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'names.sqlite') }).initialize();
    await dataSource.query('CREATE TABLE victims (id integer)');
  });

  afterAll(async () => {
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('covers every export that takes a table or schema name', () => {
    const candidates = Object.entries(outbox)
      .filter(([, value]) => mentionsAName(value))
      .map(([name]) => name);
    const listed = new Set([...Object.keys(takesTableName), ...Object.keys(takesNoName)].map((entry) => entry.split(' ')[0]));
    const unlisted = candidates.filter((name) => !listed.has(name));
    expect(unlisted).toEqual([]);
    // The detection sees the ones known to take a name (else the check above would prove nothing).
    expect(candidates).toEqual(expect.arrayContaining([...listed].filter((name) => !(name in takesNoName))));
    // The listed names still exist: a rename must update this test.
    expect([...listed].filter((name) => !(name in outbox))).toEqual([]);
  });

  it.each(Object.entries(takesTableName))('%s refuses a table name that is not an identifier, before any SQL', async (_, call) => {
    await expect(Promise.resolve().then(() => call(dataSource, HOSTILE))).rejects.toThrow(OutboxConfigurationError);
    await expect(Promise.resolve().then(() => call(dataSource, HOSTILE))).rejects.toThrow(/identifier/);
    expect(await dataSource.query('SELECT count(*) AS n FROM victims')).toEqual([{ n: 0 }]);
  });

  it.each(Object.entries(takesSchemaName))('%s refuses a schema name that is not an identifier, before any SQL', async (_, call) => {
    await expect(Promise.resolve().then(() => call(dataSource, HOSTILE))).rejects.toThrow(/schema.*identifier|identifier.*schema/s);
    expect(await dataSource.query('SELECT count(*) AS n FROM victims')).toEqual([{ n: 0 }]);
  });
});
