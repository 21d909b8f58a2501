import { loadDataLayer } from '../adapters/load-data-layer';
import { outboxDdl, type OutboxDdlOptions } from './outbox-ddl';
import { missingMigrationsPackage } from './migrations.messages';

/** The part of `@mikro-orm/migrations`' `Migration` used here. */
interface MikroOrmMigrationBase {
  addSql(sql: string): void;
}

type MigrationConstructor = abstract new (...args: any[]) => MikroOrmMigrationBase;

/**
 * The class, typed loosely (its instances as `any`) so that it fits `migrationsList`, whose type
 * is MikroORM's own `Migration`, without this library importing MikroORM's types.
 */
export type OutboxMikroOrmMigrationClass = new (...args: any[]) => any;

/**
 * A MikroORM migration class (a subclass of `@mikro-orm/migrations`' `Migration`) that creates the
 * outbox tables in `up` and drops them in `down`, with the statements of `outboxDdl`. List it in
 * `migrations.migrationsList` as `{ name, class }`; MikroORM records it by that name. The class is
 * made when this is called, so `@mikro-orm/migrations` is loaded only by apps that use it.
 */
export function outboxMikroOrmMigration(options: OutboxDdlOptions): OutboxMikroOrmMigrationClass {
  const ddl = outboxDdl(options);
  const { Migration } = loadDataLayer<{ Migration: MigrationConstructor }>('@mikro-orm/migrations', 'mikro-orm', () => missingMigrationsPackage('@mikro-orm/migrations', 'outboxMikroOrmMigration'));
  return class OutboxMigration extends Migration {
    up(): void {
      for (const statement of ddl.up) this.addSql(statement);
    }

    down(): void {
      for (const statement of ddl.down) this.addSql(statement);
    }
  };
}

