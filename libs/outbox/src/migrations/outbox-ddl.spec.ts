import { OutboxConfigurationError } from '../core/outbox.errors';
import { inboxDialectFor } from '../sql/inbox/inbox-sql.dialect';
import { tableDialectFor } from '../sql/outbox-sql.factory';
import { poisonDialectFor } from '../sql/poison/poison-sql.dialect';
import { outboxDdl, type OutboxDdlDialect } from './outbox-ddl';
import { drizzleMigrationSql, prismaMigrationFile } from './sql-migration-files';
import { sqlFiles } from './sql-files';
import { join } from 'node:path';

const oneLine = (statements: readonly string[]) => statements.map((statement) => statement.replace(/\s+/g, ' '));

describe('outboxDdl', () => {
  it.each([
    ['postgres', 'postgres'],
    ['mariadb', 'mariadb'],
    ['sqlite', 'better-sqlite3'],
  ] as [OutboxDdlDialect, string][])('on %s, runs the statements of the TypeORM migrations, created in order and dropped in reverse', (dialect, driver) => {
    const ddl = outboxDdl({ dialect, tables: ['poison', 'outbox', 'inbox'], tableName: 'events', inboxTable: 'seen', poisonTable: 'bad' });
    const outbox = tableDialectFor(driver, 'events');
    const inbox = inboxDialectFor(driver, 'seen');
    const poison = poisonDialectFor(driver, 'bad', 'seen');
    expect(oneLine(ddl.up)).toEqual(oneLine([...outbox.createTable(), ...inbox.createTable(), ...poison.createTable()]));
    expect(oneLine(ddl.down)).toEqual(oneLine([...poison.dropTable(), ...inbox.dropTable(), ...outbox.dropTable()]));
  });

  it('on MariaDB, creates the lock table with its 1,024 bucket rows, lists it, and drops it', () => {
    const ddl = outboxDdl({ dialect: 'mariadb', tableName: 'events' });
    expect(ddl.tables).toEqual(['events', 'events_paused', 'events_locks', 'events_payloads']);
    expect(ddl.up).toContain('CREATE TABLE `events_locks` (bucket int NOT NULL PRIMARY KEY) ENGINE=InnoDB');
    const seed = ddl.up.find((statement) => statement.startsWith('INSERT INTO `events_locks`'))!;
    expect([...seed.matchAll(/\((\d+)\)/g)].map((match) => Number(match[1]))).toEqual(Array.from({ length: 1024 }, (_, bucket) => bucket));
    expect(ddl.down).toContain('DROP TABLE IF EXISTS `events_locks`');
    expect(outboxDdl({ dialect: 'postgres' }).tables).toEqual(['outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads']);
  });

  it('names the schema on PostgreSQL and refuses it elsewhere', () => {
    const ddl = outboxDdl({ dialect: 'postgres', schema: 'billing', tables: ['outbox', 'inbox'] });
    expect(ddl.up[0]).toBe('CREATE SCHEMA IF NOT EXISTS "billing"');
    expect(ddl.tables).toEqual(['billing.outbox_messages', 'billing.outbox_messages_paused', 'billing.outbox_messages_payloads', 'outbox_inbox']);
    expect(() => outboxDdl({ dialect: 'mariadb', schema: 'billing' })).toThrow(/schema is supported on PostgreSQL only/);
  });

  it.each([
    [{ dialect: 'oracle' }, /"dialect" must be postgres, mariadb or sqlite; got "oracle"/],
    [{ dialect: 'postgres', tables: [] }, /"tables" must list one or more of outbox, inbox, poison/],
    [{ dialect: 'postgres', tables: ['outbox', 'orders'] }, /got \["outbox","orders"\]/],
    [{ dialect: 'postgres', tableName: 'outbox"; DROP TABLE orders; --' }, /tableName/],
    [{ dialect: 'postgres', tables: ['inbox'], inboxTable: 'in box' }, /The inbox table name must be an identifier/],
    [{ dialect: 'postgres', tables: ['poison'], poisonTable: 'x;y' }, /The poison table name must be an identifier/],
  ])('refuses %j before building any SQL', (options, message) => {
    expect(() => outboxDdl(options as never)).toThrow(OutboxConfigurationError);
    expect(() => outboxDdl(options as never)).toThrow(message);
  });
});

describe('migration files', () => {
  it('Prisma: one script in <timestamp>_outbox/migration.sql', () => {
    const file = prismaMigrationFile({ dialect: 'postgres', tables: ['outbox', 'inbox'] }, new Date('2026-01-31T12:34:56Z'));
    expect(file.path).toBe('20260131123456_outbox/migration.sql');
    expect(file.contents.match(/;\n/g)).toHaveLength(outboxDdl({ dialect: 'postgres', tables: ['outbox', 'inbox'] }).up.length);
  });

  it('drizzle: one statement between each two breakpoints, as its migrator splits them', () => {
    const sql = drizzleMigrationSql({ dialect: 'postgres', tables: ['outbox'] });
    const parts = sql.split('--> statement-breakpoint');
    expect(parts).toHaveLength(outboxDdl({ dialect: 'postgres' }).up.length);
    for (const part of parts) expect(part.trim().replace(/^--.*\n/, '')).toMatch(/^(CREATE|ALTER)[^;]*;$/s);
  });
});

describe('the SQL files of the package', () => {
  it('hold, for each dialect and table, the statements of outboxDdl', () => {
    const files = new Map(sqlFiles().map((file) => [file.path, file.contents]));
    expect(files.size).toBe(18);
    const inbox = files.get(join('mariadb', 'inbox.up.sql'))!;
    expect(inbox).toContain(`${outboxDdl({ dialect: 'mariadb', tables: ['inbox'] }).up[0]};`);
    expect(files.get(join('postgres', 'outbox.down.sql'))).toContain('DROP TABLE IF EXISTS "outbox_messages_paused";');
  });
});
