import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher, type OutboxMessageInput, type OutboxModuleOptions, type OutboxTransport } from '@nest-outbox/outbox';
import { OutboxRelay, RetryPolicy } from '@nest-outbox/outbox/core';
import { createOutboxTableMigration, createSqlOutboxStore, outboxMessageEntity, type OutboxMessageRow } from '@nest-outbox/outbox/typeorm';
import { PARCEL_ENTITIES } from './parcel.fixtures';
import { privateMariaDbDatabase, privatePostgresSchema } from './databases';
import { dropWalInstanceSlot, walInstanceOptions, walOverflowWriter } from './wal-overflow.writer';

export type TestDatabase = 'sqlite' | 'postgres' | 'mariadb';
/** The delivery mode a harness's app runs in: 'wal' on PostgreSQL only. */
export type DeliveryMode = 'table' | 'wal';

/** A private database (a temp SQLite file or a fresh PostgreSQL schema) with the outbox module on it. */
export interface OutboxHarness {
  module: TestingModule;
  dataSource: DataSource;
  publisher: OutboxPublisher;
  /**
   * Writes messages in one transaction, as an application would; with `delivery: 'wal'` moves them
   * to the table as the stream's overflow does (the rows that mode has in its table).
   */
  add(messages: OutboxMessageInput[]): Promise<string[]>;
  rows(): Promise<OutboxMessageRow[]>;
  /** A relay on this database, driven by the test instead of a timer. */
  relay(owner: string, transport: OutboxTransport, overrides?: Partial<RelayOverrides>): OutboxRelay;
  close(): Promise<void>;
}

interface RelayOverrides {
  deadLetterPolicy: 'hold' | 'skip';
  deleteOnPublish: boolean;
  batchSize: number;
  leaseMs: number;
  publishTimeoutMs: number;
  maxAttempts: number;
}

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

export async function createOutboxHarness(database: TestDatabase, options: OutboxModuleOptions = { relay: false }): Promise<OutboxHarness> {
  const isolated = await isolatedDatabase(database);
  const schema = String((isolated.options as { schema?: string }).schema);
  const wal = options.delivery === 'wal' ? walInstanceOptions(schema) : undefined;
  const module = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...isolated.options,
        entities: PARCEL_ENTITIES,
        autoLoadEntities: true,
        synchronize: true,
        // A partitioned table when the module is told so: the migration takes the same value.
        migrations: [options.partitioning ? createOutboxTableMigration({ tableName: 'outbox_messages', partitioning: options.partitioning }) : CreateOutboxTable],
        migrationsRun: true,
        logging: false,
      } as TypeOrmModuleOptions),
      OutboxModule.forRoot({ ...wal, ...options }),
    ],
  }).compile();
  module.useLogger(false);
  await module.init();
  const dataSource = module.get(DataSource);
  const publisher = module.get(OutboxPublisher);
  const moved = wal && walOverflowWriter(dataSource);
  return {
    module,
    dataSource,
    publisher,
    add: (messages) => moved?.(messages) ?? dataSource.transaction((manager) => publisher.add(manager, messages)),
    rows: () => dataSource.getRepository(outboxMessageEntity()).find({ order: { position: 'ASC' } }),
    relay: (owner, transport, overrides = {}) =>
      new OutboxRelay({
        store: createSqlOutboxStore(dataSource, 'outbox_messages', { deadLetterPolicy: overrides.deadLetterPolicy, deleteOnPublish: overrides.deleteOnPublish }),
        transports: new Map([['default', transport]]),
        owner,
        retryPolicy: new RetryPolicy(overrides.maxAttempts ?? 5, { initialMs: 50, maxMs: 200, jitter: 0 }),
        batchSize: overrides.batchSize ?? 10,
        leaseMs: overrides.leaseMs ?? 30_000,
        publishTimeoutMs: overrides.publishTimeoutMs ?? 5_000,
        logger: silent,
      }),
    close: async () => {
      if (wal) await dropWalInstanceSlot(dataSource, schema);
      await module.close();
      await isolated.drop();
    },
  };
}

export async function isolatedDatabase(database: TestDatabase): Promise<{ options: Partial<DataSourceOptions>; drop: () => Promise<void> }> {
  if (database === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-test-'));
    return {
      options: { type: 'better-sqlite3', database: join(dir, 'outbox.sqlite') },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (database === 'mariadb') {
    const { url, drop } = await privateMariaDbDatabase('t');
    return { options: { type: 'mariadb', url }, drop };
  }
  const { url, schema, drop } = await privatePostgresSchema('t');
  return { options: { type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}`, max: 20 } }, drop };
}
