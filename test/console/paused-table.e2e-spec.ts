import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxConfigurationError, OutboxModule } from '@nest-outbox/outbox';
import { AddOutboxPausedTable, AddOutboxPauseReason } from '@nest-outbox/outbox/console';

/** An outbox table made before paused destinations existed. */
class DropPausedTable1767225600001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE outbox_messages_paused');
  }
  async down(): Promise<void> {}
}

/** A paused-destinations table made before a pause had a reason. */
class PausedTableWithoutReason1767225600002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE outbox_messages_paused');
    await queryRunner.query(`CREATE TABLE outbox_messages_paused (destination varchar(255) PRIMARY KEY, paused_at varchar(30) NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')))`);
    await queryRunner.query(`INSERT INTO outbox_messages_paused (destination) VALUES ('legacy')`);
  }
  async down(): Promise<void> {}
}

describe('The paused-destinations table at startup (SQLite)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'outbox-paused-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to start without it, naming it and how to get its DDL', async () => {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations: [CreateOutboxTable, DropPausedTable1767225600001], migrationsRun: true }),
        OutboxModule.forRoot({ relay: false }),
      ],
    }).compile();
    module.useLogger(false);
    const started = module.init();
    await expect(started).rejects.toBeInstanceOf(OutboxConfigurationError);
    await expect(started).rejects.toThrow(/outbox_messages_paused.*AddOutboxPausedTable/s);
    await module.close();
  });

  it('is added by AddOutboxPausedTable to a table that lacks it, and left alone where it exists', async () => {
    const database = join(dir, 'db.sqlite');
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database, migrations: [CreateOutboxTable, DropPausedTable1767225600001, AddOutboxPausedTable], migrationsRun: true }),
        OutboxModule.forRoot({ relay: false }),
      ],
    }).compile();
    module.useLogger(false);
    await expect(module.init()).resolves.toBe(module);
    await module.close();
    const fresh = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'fresh.sqlite'), migrations: [CreateOutboxTable, AddOutboxPausedTable], migrationsRun: true }),
        OutboxModule.forRoot({ relay: false }),
      ],
    }).compile();
    fresh.useLogger(false);
    await expect(fresh.init()).resolves.toBe(fresh);
    await fresh.close();
  });

  it('refuses to start when the table lacks the pause reason, naming AddOutboxPauseReason, which adds it and keeps the pauses', async () => {
    const database = join(dir, 'db.sqlite');
    const start = async (migrations: Array<new () => MigrationInterface>) => {
      const module = await Test.createTestingModule({
        imports: [TypeOrmModule.forRoot({ type: 'better-sqlite3', database, migrations, migrationsRun: true }), OutboxModule.forRoot({ relay: false })],
      }).compile();
      module.useLogger(false);
      return module;
    };
    const old = await start([CreateOutboxTable, PausedTableWithoutReason1767225600002]);
    const started = old.init();
    await expect(started).rejects.toThrow(/outbox_messages_paused.*AddOutboxPauseReason/s);
    await old.close();

    const upgraded = await start([CreateOutboxTable, PausedTableWithoutReason1767225600002, AddOutboxPauseReason]);
    await expect(upgraded.init()).resolves.toBe(upgraded);
    const rows = await upgraded.get(DataSource).query('SELECT destination, reason FROM outbox_messages_paused');
    expect(rows).toEqual([{ destination: 'legacy', reason: null }]);
    await upgraded.close();
  });
});
