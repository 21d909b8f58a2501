import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  CreateOutboxTable,
  createSqlOutboxStore,
  OutboxModule,
  OutboxPublisher,
  OutboxRelay,
  outboxMessageEntity,
  RetryPolicy,
  type OutboxMessageRow,
  type OutboxModuleOptions,
  type OutboxTransport,
} from '@nest-outbox/outbox';
import { PARCEL_ENTITIES } from './parcel.fixtures';
import { requireService } from './services';

export type TestDatabase = 'sqlite' | 'postgres' | 'mariadb';

/** A private database (a temp SQLite file or a fresh PostgreSQL schema) with the outbox module on it. */
export interface OutboxHarness {
  module: TestingModule;
  dataSource: DataSource;
  publisher: OutboxPublisher;
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
  const module = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...isolated.options,
        entities: PARCEL_ENTITIES,
        autoLoadEntities: true,
        synchronize: true,
        migrations: [CreateOutboxTable],
        migrationsRun: true,
        logging: false,
      } as TypeOrmModuleOptions),
      OutboxModule.forRoot(options),
    ],
  }).compile();
  module.useLogger(false);
  await module.init();
  const dataSource = module.get(DataSource);
  return {
    module,
    dataSource,
    publisher: module.get(OutboxPublisher),
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
      await module.close();
      await isolated.drop();
    },
  };
}

async function isolatedDatabase(database: TestDatabase): Promise<{ options: Partial<DataSourceOptions>; drop: () => Promise<void> }> {
  if (database === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-test-'));
    return {
      options: { type: 'better-sqlite3', database: join(dir, 'outbox.sqlite') },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (database === 'mariadb') {
    const server = requireService('mariadb');
    const name = `t_${randomBytes(6).toString('hex')}`;
    const admin = async (sql: string) => {
      const connection = await createConnection(server);
      try {
        await connection.query(sql);
      } finally {
        await connection.end();
      }
    };
    await admin(`CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    return { options: { type: 'mariadb', url: url.toString() }, drop: () => admin(`DROP DATABASE ${name}`) };
  }
  const url = requireService('postgres');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await withClient(url, (client) => client.query(`CREATE SCHEMA ${schema}`));
  return {
    options: { type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}`, max: 20 } },
    drop: () => withClient(url, (client) => client.query(`DROP SCHEMA ${schema} CASCADE`)),
  };
}

async function withClient(url: string, work: (client: Client) => Promise<unknown>): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
