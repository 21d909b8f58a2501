import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import { describeOutboxStoreContract, type OutboxStoreContractSubject } from '@nest-outbox/outbox/testing';
import { openConnection, type OpenedConnection } from '../../libs/outbox/src/adapters/connection/open-connection';
import { resolveConnectionOption } from '../../libs/outbox/src/adapters/connection/outbox-connection.options';
import { randomUUID } from 'node:crypto';
import { createSqlOutboxConsoleStore, createSqlOutboxStore, tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { driverTypeOf } from '../../libs/outbox/src/core/sql-connection.port';
import { privateMariaDbDatabase, privatePostgresSchema } from '../support/databases';

const TABLE = 'outbox_messages';

/** A private database reached through the `connection` option's forms, with the outbox table made by the dialect's DDL. */
interface PrivateConnection {
  opened: OpenedConnection;
  drop(): Promise<void>;
}

/**
 * The exported store contract suite on the connections the module opens without TypeORM: the same
 * SQL as under TypeORM, run by a pg Pool, a mysql2 pool and a better-sqlite3 database of its own.
 */
function connectionStoreSubject(name: string, open: () => Promise<PrivateConnection>, deadLetterPolicy: 'hold' | 'skip' = 'hold'): OutboxStoreContractSubject {
  return {
    name: `SQL store over ${name} (dead letters: ${deadLetterPolicy})`,
    deadLetterPolicy,
    createStore: async () => {
      const { opened, drop } = await open();
      const { connection } = opened;
      const dialect = tableDialectFor(driverTypeOf(connection.dialect), TABLE);
      try {
        for (const sql of dialect.createTable()) await connection.run({ sql, params: [] });
      } catch (error) {
        await opened.close();
        await drop();
        throw error;
      }
      return {
        store: createSqlOutboxStore(connection, TABLE, { deadLetterPolicy }),
        write: async (messages) => {
          const statement = dialect.insert(messages, { notify: false });
          await connection.transaction((run) => run(statement));
        },
        close: async () => {
          await opened.close();
          await drop();
        },
      };
    },
  };
}

/** `{ pool }`: the app's node-postgres Pool, on a schema of its own; the module never ends it, so the test does. */
async function pgPool(): Promise<PrivateConnection> {
  const { url, schema, drop } = await privatePostgresSchema('conn');
  const pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 6 });
  const opened = openConnection(resolveConnectionOption({ pool }));
  return { opened, drop: async () => (await pool.end(), await drop()) };
}

/** `{ url: 'mysql://…' }`: a mysql2 pool the module opens and closes. */
async function mysqlUrl(): Promise<PrivateConnection> {
  const { url, drop } = await privateMariaDbDatabase('conn');
  return { opened: openConnection(resolveConnectionOption({ url, poolSize: 6 })), drop };
}

/** `{ url: 'sqlite:<path>' }`: a better-sqlite3 database the module opens on a file the app made. */
async function sqliteUrl(): Promise<PrivateConnection> {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-conn-'));
  const path = join(dir, 'app.sqlite');
  new Database(path).close();
  return { opened: openConnection(resolveConnectionOption({ url: `sqlite:${path}` })), drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

describeOutboxStoreContract(connectionStoreSubject('a pg Pool ({ pool })', pgPool));
describeOutboxStoreContract(connectionStoreSubject('a pg Pool ({ pool })', pgPool, 'skip'));
describeOutboxStoreContract(connectionStoreSubject('a mysql2 pool ({ url: mysql:// })', mysqlUrl));
describeOutboxStoreContract(connectionStoreSubject('a better-sqlite3 database ({ url: sqlite: })', sqliteUrl));

/**
 * The console's changes over the same connections: a bulk requeue locks and changes exactly the
 * dead rows of the filter (MariaDB in a transaction of the connection's own), pause and resume say
 * whether they changed anything.
 */
describe.each([
  ['a pg Pool', pgPool],
  ['a mysql2 pool', mysqlUrl],
  ['a better-sqlite3 database', sqliteUrl],
])('the console store over %s', (_, open) => {
  let subject: PrivateConnection;

  beforeAll(async () => {
    subject = await open();
    const { connection } = subject.opened;
    for (const sql of tableDialectFor(driverTypeOf(connection.dialect), TABLE).createTable()) await connection.run({ sql, params: [] });
  });

  afterAll(async () => {
    await subject?.opened.close();
    await subject?.drop();
  });

  it('requeues the dead rows of a filter in one batch, and pauses and resumes a destination once', async () => {
    const { connection } = subject.opened;
    const dialect = tableDialectFor(driverTypeOf(connection.dialect), TABLE);
    const row = (aggregateId: string, destination: string) => ({ id: randomUUID(), type: 'billing.invoice-issued', version: 1, aggregateType: 'invoice', aggregateId, transport: 'default', destination, occurredAt: new Date(), headers: {}, payloadJson: '{}' });
    const rows = [row('a', 'billing'), row('b', 'billing'), row('c', 'audit')];
    await connection.transaction((run) => run(dialect.insert(rows, { notify: false })));
    const store = createSqlOutboxStore(connection, TABLE);
    const claimed = await store.claim({ owner: 'test', token: randomUUID(), limit: 10, leaseMs: 30_000 });
    expect(claimed).toHaveLength(3);
    const token = randomUUID();
    await store.release('test');
    const again = await store.claim({ owner: 'test', token, limit: 10, leaseMs: 30_000 });
    expect(await store.markFailed(token, again.map((message) => ({ position: message.position, error: 'broker said no', retryInMs: null })))).toBe(3);

    const consoleStore = createSqlOutboxConsoleStore(connection, TABLE);
    const requeued = await consoleStore.requeueBatch({ status: 'dead', destination: 'billing' }, '0', 10);
    expect(requeued.sort()).toEqual(again.filter((message) => message.destination === 'billing').map((message) => message.position).sort());
    const pending = await store.claim({ owner: 'test', token: randomUUID(), limit: 10, leaseMs: 30_000 });
    expect(pending.map((message) => message.aggregateId).sort()).toEqual(['a', 'b']);

    expect(await consoleStore.pause('audit', 'broker migration')).toBe(true);
    expect(await consoleStore.pause('audit', 'again')).toBe(false);
    expect((await consoleStore.paused()).map((paused) => [paused.destination, paused.reason])).toEqual([['audit', 'broker migration']]);
    expect(await consoleStore.resume('audit')).toBe(true);
    expect(await consoleStore.resume('audit')).toBe(false);
  });
});
