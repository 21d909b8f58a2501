import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite from 'better-sqlite3';
import { createPool } from 'mysql2/promise';
import { Pool } from 'pg';
import { outboxDdl } from '@nest-outbox/outbox/migrations';
import { DatabasePayloadStore } from '@nest-outbox/outbox/typeorm';
import { ClaimedPayloadReader, type ClaimCheckReference, type SqlConnection, type SqlTransaction } from '@nest-outbox/outbox/core';
import { BetterSqliteConnection, type BetterSqliteLike } from '../../libs/outbox/src/adapters/better-sqlite3/better-sqlite3.connection';
import { Mysql2PoolConnection, type Mysql2PoolLike } from '../../libs/outbox/src/adapters/mysql2/mysql2-pool.connection';
import { PgPoolConnection, type PgPoolLike } from '../../libs/outbox/src/adapters/pg/pg-pool.connection';
import { ClaimCheck } from '../../libs/outbox/src/core/claim-check/claim-check';
import { OutboxMessageFactory } from '../../libs/outbox/src/core/outbox-message.factory';
import { SqlOutboxWriter } from '../../libs/outbox/src/sql/sql-outbox.writer';
import { postgresAdmin, privateMariaDbDatabase } from '../support/databases';
import { requireService } from '../support/services';

interface Database {
  connection: SqlConnection;
  close(): Promise<void>;
}

const DATABASES: Record<'postgres' | 'mariadb' | 'sqlite', () => Promise<Database>> = {
  async postgres() {
    const url = requireService('postgres');
    const schema = `claim_store_${Math.random().toString(16).slice(2, 10)}`;
    await postgresAdmin(url, `CREATE SCHEMA ${schema}`);
    const pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
    return {
      connection: new PgPoolConnection(pool as unknown as PgPoolLike),
      close: async () => {
        await pool.end();
        await postgresAdmin(url, `DROP SCHEMA ${schema} CASCADE`);
      },
    };
  },
  async mariadb() {
    const database = await privateMariaDbDatabase('claim_store');
    const pool = createPool({ uri: database.url, connectionLimit: 4 });
    return {
      connection: new Mysql2PoolConnection(pool as unknown as Mysql2PoolLike),
      close: async () => {
        await pool.end();
        await database.drop();
      },
    };
  },
  async sqlite() {
    const dir = mkdtempSync(join(tmpdir(), 'claim-store-'));
    const handle = new BetterSqlite(join(dir, 'outbox.db'));
    return {
      connection: new BetterSqliteConnection(handle as unknown as BetterSqliteLike),
      close: async () => {
        handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** The library's own short transaction on the connection, as the writer sees any data layer's. */
function inTransaction<T>(connection: SqlConnection, work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
  return connection.transaction((run) =>
    work({
      dialect: connection.dialect,
      layer: connection.layer,
      query: async (sql, params) => (await run({ sql, params: [...params] })).records,
      execute: async (sql, params) => (await run({ sql, params: [...params] })).affected,
    }),
  );
}

describe.each(Object.keys(DATABASES) as Array<keyof typeof DATABASES>)('the database payload store on %s', (dialect) => {
  let database: Database;
  const store = new DatabasePayloadStore('outbox_messages');
  const claims = new ClaimCheck({ thresholdBytes: 1_024, maxBytes: 8_388_608, store: 'database' }, { store: store.name, location: store.location });
  const writer = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'documents', claims }), 'outbox_messages', { payloadStore: store });
  const payloadRows = async () => Number((await database.connection.runner().rows({ sql: 'SELECT COUNT(*) AS n FROM outbox_messages_payloads', params: [] }))[0].n);
  const add = (payload: unknown) => inTransaction(database.connection, (transaction) => writer.add(transaction, { type: 'documents.scanned', aggregateType: 'document', aggregateId: 'd-1', payload }));

  beforeAll(async () => {
    database = await DATABASES[dialect]();
    // The same statements as the migrations and `outbox sql`: the payloads table comes with the outbox table.
    for (const sql of outboxDdl({ dialect, tables: ['outbox'] }).up) await database.connection.run({ sql, params: [] });
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  });

  it('stores a payload over the threshold with its row, and reads it back whole', async () => {
    const document = { pages: ['é'.repeat(2_000_000)] };
    const [id] = await add(document);
    const [row] = await database.connection.runner().rows({ sql: `SELECT payload FROM outbox_messages WHERE id = ${dialect === 'postgres' ? '$1' : '?'}`, params: [id] });
    const reference = (JSON.parse(String(row.payload)) as { outboxClaimCheck: ClaimCheckReference }).outboxClaimCheck;
    expect(reference).toMatchObject({ store: 'database', location: 'outbox_messages_payloads', key: id, bytes: Buffer.byteLength(JSON.stringify(document)) });
    const reader = new ClaimedPayloadReader([store.reader(dialect, database.connection.runner())]);
    await expect(reader.payloadOf({ headers: { 'outbox-claim-check': JSON.stringify(reference) } })).resolves.toEqual(document);
  });

  it('keeps a payload under the threshold in the message and stores nothing', async () => {
    const before = await payloadRows();
    await add({ small: true });
    expect(await payloadRows()).toBe(before);
  });

  it('stores nothing when the transaction rolls back', async () => {
    const before = await payloadRows();
    await expect(
      inTransaction(database.connection, async (transaction) => {
        await writer.add(transaction, { type: 'documents.scanned', aggregateType: 'document', aggregateId: 'd-2', payload: { text: 'x'.repeat(5_000) } });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await payloadRows()).toBe(before);
  });

  it('removes at retention only the payloads whose rows are no longer pending or dead', async () => {
    const publish = (where: string, params: unknown[]) =>
      database.connection.run({ sql: `UPDATE outbox_messages SET status = 'published', published_at = ${dialect === 'sqlite' ? "'2026-01-01 00:00:00.000'" : 'CURRENT_TIMESTAMP'} WHERE ${where}`, params });
    await publish(`status = 'pending'`, []);
    const [pending] = await add({ text: 'p'.repeat(5_000) });
    // Every payload is past a retention of 0 ms; the pending row's is kept.
    const stored = await payloadRows();
    expect(stored).toBeGreaterThan(1);
    expect(await store.deleteExpired(database.connection, 0, 1_000)).toBe(stored - 1);
    const keys = await database.connection.runner().rows({ sql: 'SELECT payload_key FROM outbox_messages_payloads', params: [] });
    expect(keys.map((row) => String(row.payload_key))).toEqual([pending]);
    await publish(`id = ${dialect === 'postgres' ? '$1' : '?'}`, [pending]);
    expect(await store.deleteExpired(database.connection, 0, 1_000)).toBe(1);
    expect(await payloadRows()).toBe(0);
  });
});
    // Every payload is past a retention of 0 ms; only the pending row's is kept.
