import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator as MikroOrmMigrator } from '@mikro-orm/migrations';
import { MikroORM } from '@mikro-orm/postgresql';
import { PrismaPg } from '@prisma/adapter-pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate as drizzleMigrate } from 'drizzle-orm/node-postgres/migrator';
import { Kysely, PostgresDialect } from 'kysely';
import { Migrator as KyselyMigrator } from 'kysely/migration';
import { Client, Pool } from 'pg';
import { drizzleMigrationSql, outboxKyselyMigration, outboxMikroOrmMigration, prismaMigrationFile } from '@nest-outbox/outbox/migrations';
import { type OutboxDataLayerTransaction } from '@nest-outbox/outbox';
import { privatePostgresSchema } from '../support/databases';
import { proveTables } from './migrated-tables.proof';
import type { InvoicePrisma } from './examples/prisma.example';
import { generatePrismaClient } from './prisma/generate-client';

type GeneratedPrismaClient = InvoicePrisma & { $transaction<T>(work: (tx: OutboxDataLayerTransaction) => Promise<T>): Promise<T>; $disconnect(): Promise<void> };

const TABLES = ['outbox', 'inbox', 'poison'] as const;
const NAMES = ['outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads', 'outbox_inbox', 'outbox_inbox_poison'];

/**
 * Each data layer's migration tool applies the outbox tables in its own form, on a PostgreSQL
 * schema of its own; an event written through the layer's transaction is then relayed, and the
 * inbox marks a message once. `down`, where the tool has one, leaves none of the tables.
 */
describe('the outbox tables in the migration form of each data layer, on PostgreSQL', () => {
  let database: { url: string; schema: string; drop(): Promise<void> };
  const pools: { end(): Promise<void> }[] = [];

  beforeEach(async () => {
    database = await privatePostgresSchema('mig');
  });

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
    await database.drop();
  });

  const pgPool = () => {
    const pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 4 });
    pools.push(pool);
    return pool;
  };
  const typeorm = () => ({ type: 'postgres' as const, url: database.url, extra: { options: `-c search_path=${database.schema}`, max: 4 } });
  const tablesIn = async (schema: string) =>
    (await pgPool().query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema])).rows.map(
      (row) => row.table_name,
    );
  const expectProof = (proof: { published: unknown[]; duplicate: boolean }) => {
    expect(proof.published).toEqual([{ aggregateId: expect.stringMatching(/^inv-/), payload: { aggregateId: expect.stringMatching(/^inv-/) } }]);
    expect(proof.duplicate).toBe(true);
  };

  it('Prisma: migration.sql, run as one script as prisma migrate deploy runs it, in a schema of its own', async () => {
    // The outbox in a schema Prisma does not manage; the inbox tables on the search_path.
    const outboxSchema = `${database.schema}_outbox`;
    const file = prismaMigrationFile({ dialect: 'postgres', tables: [...TABLES], schema: outboxSchema });
    const client = new Client({ connectionString: database.url, options: `-c search_path=${database.schema}` });
    await client.connect();
    try {
      // prisma migrate deploy sends the file as one multi-statement script; the schema engine it
      // needs is not installed here (offline), so node-postgres sends the same script the same way.
      await client.query(file.contents);
      const { PrismaClient } = require(generatePrismaClient()) as { PrismaClient: new (options: { adapter: PrismaPg }) => GeneratedPrismaClient };
      const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 4 }, { schema: database.schema }) });
      try {
        expectProof(await proveTables(typeorm(), (work) => prisma.$transaction(work), { schema: outboxSchema }));
      } finally {
        await prisma.$disconnect();
      }
      expect(await tablesIn(outboxSchema)).toEqual(['outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads']);
      expect(await tablesIn(database.schema)).toEqual(['outbox_inbox', 'outbox_inbox_poison']);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${outboxSchema}" CASCADE`);
      await client.end();
    }
  });

  it("Drizzle: a custom migration in drizzle-kit's folder layout, applied by drizzle's migrate()", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'outbox-drizzle-'));
    try {
      // What `drizzle-kit generate --custom --name=outbox` writes: the journal entry and an empty file to fill.
      mkdirSync(join(folder, 'meta'));
      writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify({ version: '7', dialect: 'postgresql', entries: [{ idx: 0, version: '7', when: 1767225600000, tag: '0000_outbox', breakpoints: true }] }));
      writeFileSync(join(folder, '0000_outbox.sql'), drizzleMigrationSql({ dialect: 'postgres', tables: [...TABLES] }));
      const db = drizzle(pgPool());
      await drizzleMigrate(db, { migrationsFolder: folder, migrationsSchema: database.schema });
      expect(await tablesIn(database.schema)).toEqual(['__drizzle_migrations', ...NAMES].sort());
      expectProof(await proveTables(typeorm(), (work) => db.transaction((tx) => work(tx))));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("MikroORM: the Migration class, run up and down by MikroORM's Migrator", async () => {
    const orm = await MikroORM.init({
      clientUrl: database.url,
      entities: [],
      discovery: { warnWhenNoEntities: false },
      driverOptions: { options: `-c search_path=${database.schema}` },
      extensions: [MikroOrmMigrator],
      // No snapshot: the migrator would write one into the working directory.
      migrations: { snapshot: false, migrationsList: [{ name: 'Migration20260101000000_outbox', class: outboxMikroOrmMigration({ dialect: 'postgres', tables: [...TABLES] }) }] },
      pool: { max: 4 },
      allowGlobalContext: true,
      debug: false,
      logger: () => undefined,
    });
    try {
      const migrator = orm.migrator;
      expect((await migrator.up()).map((migration) => migration.name)).toEqual(['Migration20260101000000_outbox']);
      expect(await tablesIn(database.schema)).toEqual([...NAMES, 'mikro_orm_migrations'].sort());
      expectProof(await proveTables(typeorm(), (work) => orm.em.fork().transactional((em) => work(em))));
      await migrator.down();
      expect(await tablesIn(database.schema)).toEqual(['mikro_orm_migrations']);
    } finally {
      await orm.close(true);
    }
  });

  it("Kysely: the Migration object, run up and down by Kysely's Migrator", async () => {
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 4 }) }) });
    try {
      const migrator = new KyselyMigrator({
        db,
        provider: { getMigrations: async () => ({ '2026_01_01_outbox': outboxKyselyMigration({ dialect: 'postgres', tables: [...TABLES] }) }) },
        migrationTableSchema: database.schema,
      });
      const up = await migrator.migrateToLatest();
      expect(up.error).toBeUndefined();
      expect(up.results).toEqual([expect.objectContaining({ migrationName: '2026_01_01_outbox', status: 'Success' })]);
      expectProof(await proveTables(typeorm(), (work) => db.transaction().execute((trx) => work(trx))));
      const down = await migrator.migrateDown();
      expect(down.error).toBeUndefined();
      expect((await tablesIn(database.schema)).filter((name) => NAMES.includes(name))).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
