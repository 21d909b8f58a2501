/**
 * Takes the migration lock and keeps it: its one migration tells the parent `{ t: 'migrating' }`
 * and never ends, so that the test can SIGKILL a process that holds the lock mid-migration.
 * Settings in LOCK_HOLDER: DataSource options (postgres, mariadb or better-sqlite3).
 */
import 'reflect-metadata';
import { DataSource, type DataSourceOptions, type MigrationInterface } from 'typeorm';
import { runMigrationsUnderLock } from '@nest-outbox/outbox/typeorm';

class CreateThings1700000000000 implements MigrationInterface {
  async up(): Promise<void> {
    process.send?.({ t: 'migrating' });
    // Never resolved, and reachable from globalThis: a promise nothing refers to lets the garbage
    // collector free this waiting migration and, with it, the lock's SQLite connection, whose
    // finalizer closes it and so lets go of the lock while this process still lives.
    await new Promise<void>((resolve) => ((globalThis as { keepMigrating?: () => void }).keepMigrating = resolve));
  }
  async down(): Promise<void> {}
}

const options = JSON.parse(process.env.LOCK_HOLDER ?? '{}') as DataSourceOptions;

void new DataSource({ ...options, migrations: [CreateThings1700000000000], logging: false })
  .initialize()
  .then((dataSource) => runMigrationsUnderLock(dataSource))
  .catch((error: unknown) => {
    process.send?.({ t: 'failed', text: String(error) });
    process.exit(1);
  });
