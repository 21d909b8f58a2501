import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { MigrationLockTimeoutError } from './migration-lock.error';
import { defaultMysqlLockName } from './mysql-migration.lock';
import { runMigrationsUnderLock } from './run-migrations-under-lock';

class CreateThings1700000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE things (id integer PRIMARY KEY)');
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE things');
  }
}

/** Only what the checks before any connection read. */
const initialized = (options: Record<string, unknown>) => ({ isInitialized: true, options: { migrationsRun: false, ...options } }) as unknown as DataSource;

describe('runMigrationsUnderLock', () => {
  let dir: string;
  const opened: DataSource[] = [];
  const sqlite = async (database: string) => {
    const dataSource = await new DataSource({ type: 'better-sqlite3', database, migrations: [CreateThings1700000000000], logging: false }).initialize();
    opened.push(dataSource);
    return dataSource;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'migration-lock-'));
  });
  afterEach(async () => {
    for (const dataSource of opened.splice(0)) await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a data source that is not initialized, or that ran its migrations in initialize()', async () => {
    await expect(runMigrationsUnderLock({ isInitialized: false, options: { type: 'postgres' } } as unknown as DataSource)).rejects.toThrow(
      'runMigrationsUnderLock needs an initialized DataSource: call "await dataSource.initialize()" first (with "migrationsRun: false").',
    );
    await expect(runMigrationsUnderLock(initialized({ type: 'postgres', migrationsRun: true }))).rejects.toThrow(/"migrationsRun: true", so initialize\(\) ran the migrations already, without the lock/);
  });

  it('refuses bad options, naming them, before it connects', async () => {
    const postgres = initialized({ type: 'postgres' });
    await expect(runMigrationsUnderLock(postgres, { timeoutMs: 0 })).rejects.toThrow('"timeoutMs" 0 must be a positive whole number of milliseconds.');
    await expect(runMigrationsUnderLock(postgres, { timeoutMs: 1.5 })).rejects.toThrow(OutboxConfigurationError);
    await expect(runMigrationsUnderLock(postgres, { postgresKey: 'outbox' })).rejects.toThrow('"postgresKey" outbox must be a whole number between');
    await expect(runMigrationsUnderLock(postgres, { postgresKey: 2n ** 63n })).rejects.toThrow('"postgresKey" 9223372036854775808 must be');
    await expect(runMigrationsUnderLock(initialized({ type: 'mariadb' }), { mysqlLockName: 'x'.repeat(65) })).rejects.toThrow('must be 1 to 64 characters');
  });

  it('names the drivers it has a lock for, and the way out for others', async () => {
    await expect(runMigrationsUnderLock(initialized({ type: 'mssql' }))).rejects.toThrow(
      'runMigrationsUnderLock has no migration lock for TypeORM\'s "mssql" driver: it supports "postgres", "mariadb", "mysql" and "better-sqlite3".',
    );
  });

  it('SQLite: runs the pending migrations once; a second run finds none', async () => {
    const file = join(dir, 'app.sqlite');
    const logger = { log: jest.fn() };
    expect((await runMigrationsUnderLock(await sqlite(file), { logger })).map((migration) => migration.name)).toEqual(['CreateThings1700000000000']);
    expect(await runMigrationsUnderLock(await sqlite(file), { logger })).toEqual([]);
    // Taken at once both times: nothing to report.
    expect(logger.log).not.toHaveBeenCalled();
    expect(existsSync(`${file}-migration-lock`)).toBe(true);
  });

  it('SQLite: waits while another process holds the lock file, then gives up naming the file and the timeout', async () => {
    const file = join(dir, 'app.sqlite');
    const holder = new Database(`${file}-migration-lock`);
    holder.exec('BEGIN EXCLUSIVE');
    const logger = { log: jest.fn() };
    const dataSource = await sqlite(file);
    try {
      const started = Date.now();
      const outcome = runMigrationsUnderLock(dataSource, { timeoutMs: 300, logger });
      await expect(outcome).rejects.toThrow(MigrationLockTimeoutError);
      await expect(outcome).rejects.toThrow(
        `Gave up after 0.3 s waiting for the migration lock (an exclusive transaction on the SQLite file "${file}-migration-lock"). ` +
          'Another instance is running its migrations, or a session that took the lock has not let go of it. ' +
          'If a migration is still running (a long one on a big table), raise "timeoutMs" of runMigrationsUnderLock (now 300). ' +
          `If none is: "fuser ${file}-migration-lock" (or lsof) names the process that has it open, and end it; a process that dies lets go of the lock by itself.`,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(logger.log).toHaveBeenCalledWith(expect.stringMatching(/^Waiting up to 0.3 s for the migration lock \(an exclusive transaction on the SQLite file/));
      expect(await dataSource.query(`SELECT name FROM sqlite_master WHERE name = 'things'`)).toEqual([]);
    } finally {
      holder.close();
    }
  });

  it('SQLite: runs the migrations as soon as the holder lets go', async () => {
    const file = join(dir, 'app.sqlite');
    const holder = new Database(`${file}-migration-lock`);
    holder.exec('BEGIN EXCLUSIVE');
    const letGo = setTimeout(() => holder.close(), 200);
    try {
      const ran = await runMigrationsUnderLock(await sqlite(file), { timeoutMs: 10_000, logger: { log: () => undefined } });
      expect(ran.map((migration) => migration.name)).toEqual(['CreateThings1700000000000']);
    } finally {
      clearTimeout(letGo);
      if (holder.open) holder.close();
    }
  });

  it('SQLite in memory: no lock, no file', async () => {
    expect(await runMigrationsUnderLock(await sqlite(':memory:'))).toHaveLength(1);
    expect(existsSync(':memory:-migration-lock')).toBe(false);
  });

  it('MariaDB/MySQL: the default GET_LOCK name holds the database, within the 64 characters MySQL allows', () => {
    expect(defaultMysqlLockName('orders')).toBe('outbox-migrations:orders');
    const long = defaultMysqlLockName('d'.repeat(64));
    expect(long).toMatch(/^outbox-migrations:[0-9a-f]{46}$/);
    expect(defaultMysqlLockName('d'.repeat(64))).toBe(long);
    expect(defaultMysqlLockName('e'.repeat(64))).not.toBe(long);
  });
});
