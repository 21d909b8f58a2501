import { loadDataLayer } from '../adapters/load-data-layer';
import { outboxDdl, type OutboxDdlOptions } from './outbox-ddl';
import { missingMigrationsPackage } from './migrations.messages';

/** The part of a Kysely instance a migration uses. */
interface KyselyLike {
  executeQuery(query: any): Promise<unknown>;
}

interface KyselyModule {
  CompiledQuery: { raw(sql: string, parameters?: unknown[]): unknown };
}

/** Kysely's `Migration` shape, typed without importing kysely. */
export interface OutboxKyselyMigration {
  up(db: KyselyLike): Promise<void>;
  down(db: KyselyLike): Promise<void>;
}

/**
 * A migration for Kysely's `Migrator` that creates the outbox tables (`up`) or drops them
 * (`down`), with the statements of `outboxDdl`. Add it to your provider's migrations under a name
 * that sorts where it belongs, e.g. `{ '2026_01_01_outbox': outboxKyselyMigration({ dialect: 'postgres' }) }`.
 * The names are checked here, when the migration is built; kysely is loaded when it runs.
 */
export function outboxKyselyMigration(options: OutboxDdlOptions): OutboxKyselyMigration {
  const ddl = outboxDdl(options);
  const run = async (db: KyselyLike, statements: readonly string[]) => {
    const { CompiledQuery } = loadDataLayer<KyselyModule>('kysely', 'kysely', () => missingMigrationsPackage('kysely', 'outboxKyselyMigration'));
    for (const statement of statements) await db.executeQuery(CompiledQuery.raw(statement));
  };
  return { up: (db) => run(db, ddl.up), down: (db) => run(db, ddl.down) };
}
