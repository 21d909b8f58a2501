import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import BetterSqlite from 'better-sqlite3';
import { createPool } from 'mysql2/promise';
import { Pool } from 'pg';
import { DataSource, EntitySchema, type EntityManager } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, OutboxInboxModule } from '@nest-outbox/outbox';
import type { SqlConnection, SqlTransaction } from '@nest-outbox/outbox/core';
import type { OutboxConnectionOptions } from '@nest-outbox/outbox';
import { BetterSqliteConnection, type BetterSqliteLike } from '../../libs/outbox/src/adapters/better-sqlite3/better-sqlite3.connection';
import { Mysql2PoolConnection, type Mysql2PoolLike } from '../../libs/outbox/src/adapters/mysql2/mysql2-pool.connection';
import { driverTypeOf } from '../../libs/outbox/src/core/sql-connection.port';
import { TypeOrmPoisonStore } from '@nest-outbox/outbox/typeorm';
import { PgPoolConnection, type PgPoolLike } from '../../libs/outbox/src/adapters/pg/pg-pool.connection';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { poisonDialectFor } from '../../libs/outbox/src/sql/poison/poison-sql.dialect';
import { SqlPoisonStore } from '../../libs/outbox/src/sql/poison/sql-poison.store';
import { isolatedDatabase, type TestDatabase } from '../support/outbox-harness';

/**
 * Which transactions the inbox opens: TypeORM's (`dataSource`, the default) or the library's own on
 * `OutboxInboxModule.forRoot({ connection })`, without TypeORM. The inbox tests run over both.
 */
export type InboxVariant = 'typeorm' | 'connection';

/** The side effect a consumer writes: one row per handled message. */
interface Shipment {
  id: number;
  messageId: string;
}
const ShipmentEntity = new EntitySchema<Shipment>({
  name: 'InboxTestShipment',
  tableName: 'inbox_test_shipments',
  columns: { id: { type: 'integer', primary: true, generated: 'increment' }, messageId: { name: 'message_id', type: 'varchar', length: 64 } },
});

/** What a test does to the database, whichever variant runs it. */
export interface InboxDatabase {
  /** Writes a shipment in the inbox's transaction `tx` (what `process` hands the work, or `OutboxInbox.manager()`). */
  ship(tx: unknown, messageId: string): Promise<unknown>;
  /** Runs `SELECT 1` in `tx`, to hold it open a little. */
  hold(tx: unknown): Promise<unknown>;
  /** A transaction of the application's own, outside the inbox, that writes a shipment. */
  ownTransaction(messageId: string): Promise<void>;
  /** One statement in autocommit; the dialect's placeholders. */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  shipments(): Promise<number>;
  marks(): Promise<number>;
  /** The poison table, read and written from outside the app (as the CLI does). */
  poisonStore(): Omit<SqlPoisonStore<unknown>, 'claim' | 'unmark'>;
  close(): Promise<void>;
}

const SHIPMENTS_TABLE: Record<TestDatabase, string> = {
  postgres: 'CREATE TABLE inbox_test_shipments (id serial PRIMARY KEY, message_id varchar(64) NOT NULL)',
  sqlite: 'CREATE TABLE inbox_test_shipments (id integer PRIMARY KEY AUTOINCREMENT, message_id varchar(64) NOT NULL)',
  mariadb: 'CREATE TABLE inbox_test_shipments (id int AUTO_INCREMENT PRIMARY KEY, message_id varchar(64) NOT NULL)',
};

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Starts a Nest testing module with the inbox on `database`, in `variant`, and the given controllers and providers. */
export async function startInbox(
  database: TestDatabase,
  variant: InboxVariant,
  poison: { maxAttempts: number },
  extra: { controllers: any[]; providers: any[] },
): Promise<{ module: TestingModule } & InboxDatabase> {
  const isolated = await isolatedDatabase(database);
  const settings = { pruneIntervalMs: 0, retentionMs: 60_000, replayPollMs: 0, poison };
  // With `connection`, the test's side of the database (the app's own transactions, reads, the CLI's poison store) is a connection of its own.
  let own: { connection: SqlConnection; connectionOption: OutboxConnectionOptions; close(): Promise<void> } | undefined;
  let module: TestingModule | undefined;
  try {
    if (variant === 'connection') {
      own = await ownConnection(database, isolated.options);
      for (const sql of [
        SHIPMENTS_TABLE[database],
        ...inboxDialectFor(driverTypeOf(own.connection.dialect), 'outbox_inbox').createTable(),
        ...poisonDialectFor(driverTypeOf(own.connection.dialect), 'outbox_inbox_poison').createTable(),
      ]) {
        await own.connection.run({ sql, params: [] });
      }
    }
    module = await Test.createTestingModule({
      imports:
        variant === 'connection'
          ? [OutboxInboxModule.forRoot({ ...settings, connection: own!.connectionOption })]
          : [
              TypeOrmModule.forRoot({
                ...isolated.options,
                entities: [ShipmentEntity],
                synchronize: true,
                migrations: [CreateInboxTable, CreateInboxPoisonTable],
                migrationsRun: true,
                logging: false,
              } as TypeOrmModuleOptions),
              OutboxInboxModule.forRoot(settings),
            ],
      controllers: extra.controllers,
      providers: extra.providers,
    }).compile();
    module.useLogger(false);
    await module.init();
  } catch (error) {
    await module?.close();
    await own?.close();
    await isolated.drop();
    throw error;
  }
  const close = async () => {
    await module!.close();
    await own?.close();
    await isolated.drop();
  };
  const count = async (rows: Record<string, unknown>[]) => Number(rows[0].n);
  if (own) {
    const { connection } = own;
    const insert = `INSERT INTO inbox_test_shipments (message_id) VALUES (${connection.dialect === 'postgres' ? '$1' : '?'})`;
    const query = async (sql: string, params: unknown[] = []) => (await connection.run({ sql, params })).records;
    return {
      module,
      ship: (tx, messageId) => (tx as SqlTransaction).execute(insert, [messageId]),
      hold: (tx) => (tx as SqlTransaction).query('SELECT 1', []),
      ownTransaction: (messageId) =>
        connection.transaction(async (run) => {
          await run({ sql: insert, params: [messageId] });
          await tick();
        }),
      query,
      shipments: async () => count(await query('SELECT COUNT(*) AS n FROM inbox_test_shipments')),
      marks: async () => count(await query('SELECT COUNT(*) AS n FROM outbox_inbox')),
      poisonStore: () => new SqlPoisonStore<SqlTransaction>(connection, 'outbox_inbox_poison', 'outbox_inbox', (tx, { sql, params }) => tx.query(sql, params)),
      close,
    };
  }
  const dataSource = module.get(DataSource);
  const inboxTable = database === 'mariadb' ? '`outbox_inbox`' : '"outbox_inbox"';
  return {
    module,
    ship: (tx, messageId) => (tx as EntityManager).getRepository(ShipmentEntity).insert({ messageId }),
    hold: (tx) => (tx as EntityManager).query('SELECT 1'),
    ownTransaction: (messageId) =>
      dataSource.transaction(async (manager) => {
        await manager.getRepository(ShipmentEntity).insert({ messageId });
        await tick();
      }),
    query: (sql, params) => dataSource.query(sql, params),
    shipments: () => dataSource.getRepository(ShipmentEntity).count(),
    marks: async () => count(await dataSource.query(`SELECT COUNT(*) AS n FROM ${inboxTable}`)),
    poisonStore: () => new TypeOrmPoisonStore(dataSource, 'outbox_inbox_poison', 'outbox_inbox'),
    close,
  };
}

/** A connection of the test's own to the isolated database, and the `connection` option that gives the module one to the same database. */
async function ownConnection(database: TestDatabase, options: Record<string, unknown>) {
  if (database === 'sqlite') {
    // The module opens its own handle on the file (`sqlite:` url); this one stands for the app's data layer.
    const file = options.database as string;
    // No busy timeout: a blocking wait would stall the event loop, and with it the module's transaction it waits for.
    const handle = new BetterSqlite(file, { timeout: 0 });
    return { connection: new BetterSqliteConnection(handle as unknown as BetterSqliteLike), connectionOption: { url: `sqlite:${file}` }, close: async () => void handle.close() };
  }
  if (database === 'mariadb') {
    const pool = createPool({ uri: options.url as string, connectionLimit: 12, supportBigNumbers: true, bigNumberStrings: true });
    return { connection: new Mysql2PoolConnection(pool as unknown as Mysql2PoolLike), connectionOption: { pool }, close: () => pool.end() };
  }
  const pool = new Pool({ connectionString: options.url as string, options: `-c search_path=${options.schema as string}`, max: 12 });
  return { connection: new PgPoolConnection(pool as unknown as PgPoolLike), connectionOption: { pool }, close: () => pool.end() };
}
