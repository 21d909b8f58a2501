import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { CreateOutboxTable, OutboxConfigurationError, OutboxModule } from '@nest-outbox/outbox';
import { AddOutboxPayloadsTable } from '@nest-outbox/outbox/typeorm';

/** An outbox table made before the claim check existed. */
class DropPayloadsTable1767225600003 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE outbox_messages_payloads');
  }
  async down(): Promise<void> {}
}

describe('the payloads table of an outbox made before the claim check (SQLite)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'outbox-payloads-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const start = async (migrations: Function[], claimCheck: boolean): Promise<TestingModule> => {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations, migrationsRun: true }),
        OutboxModule.forRoot({ relay: false, defaultTopic: 'documents', claimCheck }),
      ],
    }).compile();
    module.useLogger(false);
    return module;
  };

  it('without it, the claim check refuses to start, naming the table and the migration; without the claim check, the app starts', async () => {
    const module = await start([CreateOutboxTable, DropPayloadsTable1767225600003], true);
    const started = module.init();
    await expect(started).rejects.toBeInstanceOf(OutboxConfigurationError);
    await expect(started).rejects.toThrow(/"claimCheck" stores payloads in "outbox_messages_payloads", which cannot be read .*AddOutboxPayloadsTable/s);
    await module.close();
    const without = await start([CreateOutboxTable, DropPayloadsTable1767225600003], false);
    await expect(without.init()).resolves.toBe(without);
    await without.close();
  });

  it('is added by AddOutboxPayloadsTable where it lacks, and left alone where it exists', async () => {
    const module = await start([CreateOutboxTable, DropPayloadsTable1767225600003, AddOutboxPayloadsTable], true);
    await expect(module.init()).resolves.toBe(module);
    const dataSource = module.get(DataSource);
    await dataSource.query(`INSERT INTO outbox_messages_payloads (payload_key, byte_size, sha256, payload) VALUES ('k', 2, '${'0'.repeat(64)}', '{}')`);
    // Run again (a list that holds it after CreateOutboxTable): the table and its row stay.
    const runner = dataSource.createQueryRunner();
    await new AddOutboxPayloadsTable().up(runner).finally(() => runner.release());
    expect(await dataSource.query('SELECT payload_key, store FROM outbox_messages_payloads')).toEqual([{ payload_key: 'k', store: 'database' }]);
    await module.close();
  });
});
