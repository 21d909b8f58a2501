import { randomBytes } from 'node:crypto';
import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { dropWalSlot } from '../../libs/outbox/src/wal/wal-slot.setup';
import { STREAM_OWNER } from '../../libs/outbox/src/sql/dialects/stream-owned-rows.sql';
import { PARCEL_ENTITIES } from './parcel.fixtures';
import { postgresAdmin } from './databases';
import { requireService } from './services';
import { waitFor } from './wait-for';

/**
 * A private schema and replication slot on the test PostgreSQL (which runs with wal_level =
 * logical), and apps in the WAL delivery mode on them. Slots are cluster-wide and hold WAL until
 * dropped, so `drop` removes the slot as well as the schema.
 */
export interface WalSandbox {
  url: string;
  schema: string;
  slotName: string;
  /** `username`: connect as another role; `imports`, `providers`, `entities`: more beside the outbox and the parcels. */
  start(options: OutboxModuleOptions, connection?: WalAppExtras): Promise<WalApp>;
  drop(): Promise<void>;
}

export interface WalAppExtras {
  username?: string;
  imports?: ModuleMetadata['imports'];
  providers?: ModuleMetadata['providers'];
  entities?: Function[];
  /** Serve HTTP (for the console): the app listens on a free port of 127.0.0.1, as `WalApp.http`. */
  http?: boolean;
  /** Where the app's log goes; none by default. */
  logger?: LoggerService;
}

export interface WalApp {
  module: TestingModule;
  dataSource: DataSource;
  publisher: OutboxPublisher;
  http?: INestApplication;
  close(): Promise<void>;
}

/** `url`: another server than the shared test PostgreSQL (one the test restarts, say). */
export async function walSandbox(prefix: string, url = requireService('postgres')): Promise<WalSandbox> {
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  await postgresAdmin(url, `CREATE SCHEMA ${schema}`);
  const apps = new Set<WalApp>();
  const sandbox: WalSandbox = {
    url,
    schema,
    slotName: `${schema}_slot`,
    async start(options, connection = {}) {
      const module = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            type: 'postgres',
            url: connection.username ? withUser(url, connection.username) : url,
            schema,
            extra: { options: `-c search_path=${schema}`, max: 20 },
            entities: [...PARCEL_ENTITIES, ...(connection.entities ?? [])],
            synchronize: true,
            migrations: [CreateOutboxTable],
            migrationsRun: true,
            retryAttempts: 0,
            logging: false,
          }),
          ...(connection.imports ?? []),
          OutboxModule.forRoot({ delivery: 'wal', pollIntervalMs: 60_000, ...options, wal: { slotName: sandbox.slotName, ...options.wal } }),
        ],
        providers: connection.providers ?? [],
      }).compile();
      module.useLogger(connection.logger ?? false);
      const http = connection.http ? module.createNestApplication({ logger: connection.logger ?? false }) : undefined;
      let closed = false;
      const app: WalApp = {
        module,
        dataSource: module.get(DataSource),
        publisher: module.get(OutboxPublisher),
        http,
        close: async () => {
          if (closed) return;
          closed = true;
          apps.delete(app);
          await (http ?? module).close();
        },
      };
      apps.add(app);
      await (http ? http.listen(0, '127.0.0.1') : module.init()).catch(async (error: unknown) => {
        await app.close();
        throw error;
      });
      return app;
    },
    async drop() {
      for (const app of [...apps]) await app.close();
      const { Client } = await import('pg');
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        // The server frees a slot a moment after its reader disconnects.
        await waitFor('the slot to be released', async () => (await client.query(`SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active`, [sandbox.slotName])).rowCount === 0);
        await dropWalSlot(async (sql, params) => (await client.query(sql, params)).rows, { slotName: sandbox.slotName, publicationName: sandbox.slotName });
      } finally {
        await client.end();
      }
      await postgresAdmin(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
  return sandbox;
}

function withUser(url: string, username: string): string {
  const parsed = new URL(url);
  parsed.username = username;
  return parsed.toString();
}

/** Adds one `parcel.noted` event of a parcel, labelled, in a transaction of its own; resolves its id. */
export function noteParcel(app: WalApp, aggregateId: string, label: string): Promise<string[]> {
  return app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic: 'parcels' }));
}

/**
 * A parcel's rows in the outbox table, in order: id, label and status; `streamOwned`: rows the stream
 * publishes itself (`wal.write: 'row'`), not (yet) the table relay's.
 */
export function parcelRows(app: WalApp, aggregateId: string): Promise<Array<{ id: string; label: string; status: string; streamOwned: boolean }>> {
  return app.dataSource.query(
    `SELECT id::text AS id, payload::jsonb->>'label' AS label, status, lease_owner IS NOT DISTINCT FROM $2 AS "streamOwned" FROM outbox_messages WHERE aggregate_id = $1 ORDER BY position`,
    [aggregateId, STREAM_OWNER],
  );
}

/** A parcel's rows the table relay owns (every row in the table mode; those the stream moved or never owned in the WAL mode). */
export async function tableRelayRows(app: WalApp, aggregateId: string): Promise<Array<{ id: string; label: string; status: string }>> {
  return (await parcelRows(app, aggregateId)).filter((row) => !row.streamOwned);
}
