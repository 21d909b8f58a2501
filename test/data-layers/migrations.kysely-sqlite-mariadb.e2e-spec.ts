import Database from 'better-sqlite3';
import { Kysely, MysqlDialect, SqliteDialect, type Dialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import { createPool } from 'mysql2';
import type { DataSourceOptions } from 'typeorm';
import { outboxKyselyMigration, type OutboxDdlDialect } from '@nest-outbox/outbox/migrations';
import { isolatedDatabase } from '../support/outbox-harness';
import { proveTables } from './migrated-tables.proof';

const NAMES = ['outbox_inbox', 'outbox_inbox_poison', 'outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads'];

/** Kysely is the layer here that runs on SQLite and MariaDB too: its Migrator applies the tables there, and removes them. */
describe.each([
  ['sqlite', 'sqlite'],
  ['mariadb', 'mariadb'],
] as const)("the outbox tables by Kysely's Migrator, on %s", (database, dialect: OutboxDdlDialect) => {
  let isolated: { options: Partial<DataSourceOptions>; drop(): Promise<void> };
  let db: Kysely<unknown>;

  beforeAll(async () => {
    isolated = await isolatedDatabase(database);
    const options = isolated.options as { database?: string; url?: string };
    const kyselyDialect: Dialect =
      database === 'sqlite' ? new SqliteDialect({ database: new Database(options.database!) }) : new MysqlDialect({ pool: createPool({ uri: options.url!, connectionLimit: 4 }) });
    db = new Kysely<unknown>({ dialect: kyselyDialect });
  });

  afterAll(async () => {
    await db?.destroy();
    await isolated?.drop();
  });

  const tables = async () => (await db.introspection.getTables()).map((table) => table.name).filter((name) => NAMES.includes(name)).sort();

  // The outbox and the inbox do not yet write through Kysely on MariaDB (SqlOutboxWriter says why): there they write through TypeORM.
  it('applies them, an event added in a transaction is relayed, the inbox marks a message once, and down removes them', async () => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => ({ '2026_01_01_outbox': outboxKyselyMigration({ dialect, tables: ['outbox', 'inbox', 'poison'] }) }) },
    });
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(up.results).toEqual([expect.objectContaining({ migrationName: '2026_01_01_outbox', status: 'Success' })]);
    expect(await tables()).toEqual(NAMES);

    const proof = await proveTables(isolated.options, (work) => db.transaction().execute((trx) => work(trx)));
    expect(proof.published).toEqual([{ aggregateId: expect.stringMatching(/^inv-/), payload: { aggregateId: expect.stringMatching(/^inv-/) } }]);
    expect(proof.duplicate).toBe(true);

    const down = await migrator.migrateDown();
    expect(down.error).toBeUndefined();
    expect(await tables()).toEqual([]);
  });
});
