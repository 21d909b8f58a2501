import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import { describeOutboxStoreContract, type OutboxStoreContractSubject } from '@nest-outbox/outbox';
import { openConnection, type OpenedConnection } from '../../libs/outbox/src/adapters/connection/open-connection';
import { resolveConnectionOption } from '../../libs/outbox/src/adapters/connection/outbox-connection.options';
import { createSqlOutboxStore, tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { driverTypeOf } from '../../libs/outbox/src/sql/sql-connection.port';
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
