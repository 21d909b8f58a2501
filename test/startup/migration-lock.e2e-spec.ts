import { fork } from 'node:child_process';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { MIGRATION_LOCK_POSTGRES_KEY, MigrationLockTimeoutError, runMigrationsUnderLock } from '@nest-outbox/outbox/typeorm';
import { waitFor } from '../support/wait-for';
import { freshMariaDbDatabase, freshPostgresDatabase, freshSqliteDatabase, type FreshDatabase } from './first-start.harness';

class CreateThings1700000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE things (id integer PRIMARY KEY)');
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE things');
  }
}

/**
 * The lock as an operator meets it: a session that holds it makes the start wait, then fail naming
 * the lock and that session; once it lets go, the migrations run. On the real servers, because the
 * wait is the server's own (lock_timeout, GET_LOCK's timeout).
 */
describe('runMigrationsUnderLock on the real servers', () => {
  let database: FreshDatabase | undefined;
  let dataSource: DataSource | undefined;

  afterEach(async () => {
    await dataSource?.destroy();
    dataSource = undefined;
    await database?.drop();
    database = undefined;
  });

  it('PostgreSQL: waits for the session holding the advisory lock, fails naming it, and runs once it is released', async () => {
    database = await freshPostgresDatabase('migration_lock');
    const holder = new Client({ connectionString: database.url, application_name: 'lock-holder' });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_POSTGRES_KEY]);
      const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      dataSource = await new DataSource({ type: 'postgres', url: database.url, migrations: [CreateThings1700000000000], logging: false }).initialize();
      const waited = { log: jest.fn() };
      const started = Date.now();
      const outcome = runMigrationsUnderLock(dataSource, { timeoutMs: 500, logger: waited });
      await expect(outcome).rejects.toThrow(MigrationLockTimeoutError);
      const error = (await outcome.catch((failure: Error) => failure)) as Error;
      expect(Date.now() - started).toBeGreaterThanOrEqual(500);
      const name = new URL(database.url).pathname.slice(1);
      expect(error.message).toMatch(
        new RegExp(`^Gave up after 0.5 s waiting for the migration lock \\(PostgreSQL advisory lock ${MIGRATION_LOCK_POSTGRES_KEY} in database "${name}"\\), held by backend pid ${holderPid} "lock-holder" from 127\\.0\\.0\\.1, connected at `),
      );
      expect(error.message).toContain('raise "timeoutMs" of runMigrationsUnderLock (now 500)');
      expect(error.message).toContain('"SELECT pid FROM pg_locks WHERE locktype = \'advisory\' AND classid = 1869968482 AND objid = 1870163303 AND objsubid = 1');
      expect(waited.log).toHaveBeenCalledWith(expect.stringContaining(`Waiting up to 0.5 s for the migration lock (PostgreSQL advisory lock ${MIGRATION_LOCK_POSTGRES_KEY}`));
      // Nothing ran, not even TypeORM's own table.
      expect(await database.tables()).toEqual([]);

      // Released while the instance waits: it runs the migrations then.
      const running = runMigrationsUnderLock(dataSource, { timeoutMs: 10_000, logger: { log: () => undefined } });
      setTimeout(() => void holder.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_POSTGRES_KEY]), 200);
      expect((await running).map((migration) => migration.name)).toEqual(['CreateThings1700000000000']);
      expect(await database.tables()).toEqual(['migrations', 'things']);
      // Given back: the lock is free.
      expect((await holder.query('SELECT pg_try_advisory_lock($1::bigint) AS free', [MIGRATION_LOCK_POSTGRES_KEY])).rows[0].free).toBe(true);
    } finally {
      await holder.end();
    }
  });

  it('MariaDB: waits for the connection holding GET_LOCK, fails naming it, and runs once it is released', async () => {
    database = await freshMariaDbDatabase('migration_lock');
    const name = `outbox-migrations:${new URL(database.url).pathname.slice(1)}`;
    const holder = await createConnection(database.url);
    try {
      await holder.query('SELECT GET_LOCK(?, 0)', [name]);
      const [[{ id }]] = (await holder.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
      dataSource = await new DataSource({ type: 'mariadb', url: database.url, migrations: [CreateThings1700000000000], logging: false }).initialize();
      const outcome = runMigrationsUnderLock(dataSource, { timeoutMs: 1_000, logger: { log: () => undefined } });
      await expect(outcome).rejects.toThrow(MigrationLockTimeoutError);
      const error = (await outcome.catch((failure: Error) => failure)) as Error;
      expect(error.message).toMatch(new RegExp(`^Gave up after 1 s waiting for the migration lock \\(MariaDB/MySQL GET_LOCK\\('${name}'\\)\\), held by connection ${id} \\(outbox@`));
      expect(error.message).toContain(`"SELECT IS_USED_LOCK('${name}')" gives the connection that holds it, and "KILL <that id>" ends it`);
      expect(await database.tables()).toEqual([]);

      const running = runMigrationsUnderLock(dataSource, { timeoutMs: 10_000, logger: { log: () => undefined } });
      setTimeout(() => void holder.query('SELECT RELEASE_LOCK(?)', [name]), 200);
      expect((await running).map((migration) => migration.name)).toEqual(['CreateThings1700000000000']);
      expect(await database.tables()).toEqual(['migrations', 'things']);
      const [[{ free }]] = (await holder.query('SELECT IS_FREE_LOCK(?) AS free', [name])) as unknown as [[{ free: number }]];
      expect(Number(free)).toBe(1);
    } finally {
      await holder.end();
    }
  });

  /** A process that holds the lock mid-migration (migration-lock-holder.child.ts); resolves once it migrates. */
  const holdInChild = async (options: Record<string, unknown>) => {
    const child = fork(join(__dirname, 'migration-lock-holder.child.ts'), [], {
      execArgv: ['-r', join(__dirname, '..', 'support', 'ts-child.register.cjs'), '-r', join(__dirname, '..', 'support', 'exit-with-parent.cjs')],
      env: { ...process.env, LOCK_HOLDER: JSON.stringify(options) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let said = '';
    child.on('message', (message: { t: string; text?: string }) => (said = message.text ?? message.t));
    await waitFor('the child to take the lock and start migrating', () => {
      if (child.exitCode !== null) throw new Error(`the child exited: ${said}`);
      return said === 'migrating';
    }, 30_000);
    return child;
  };

  const killed = async (child: ReturnType<typeof fork>) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };

  it.each([
    ['PostgreSQL', async () => ({ type: 'postgres', url: (database = await freshPostgresDatabase('migration_lock')).url })],
    ['MariaDB', async () => ({ type: 'mariadb', url: (database = await freshMariaDbDatabase('migration_lock')).url })],
    ['SQLite', async () => ({ type: 'better-sqlite3', database: (database = await freshSqliteDatabase('migration-lock')).url.slice('sqlite:'.length) })],
  ])('%s: a process killed while it holds the lock mid-migration lets go of it; the next instance runs the migration', async (_, open) => {
    const options: Record<string, unknown> = await open();
    const child = await holdInChild(options);
    dataSource = await new DataSource({ ...options, migrations: [CreateThings1700000000000], logging: false } as never).initialize();
    // Held while the child lives...
    await expect(runMigrationsUnderLock(dataSource, { timeoutMs: 200, logger: { log: () => undefined } })).rejects.toThrow(MigrationLockTimeoutError);
    await killed(child);
    // ...and let go of when it dies.
    const started = Date.now();
    const ran = await runMigrationsUnderLock(dataSource, { timeoutMs: 10_000, logger: { log: () => undefined } });
    if (process.env.FIRST_START_PRINT) process.stderr.write(`${String(options.type)}: lock free ${Date.now() - started} ms after the holder's SIGKILL\n`);
    // The killed one's migration rolled back (or never recorded itself): it runs here.
    expect(ran.map((migration) => migration.name)).toEqual(['CreateThings1700000000000']);
  });
});
