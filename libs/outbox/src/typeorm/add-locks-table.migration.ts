import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DEFAULT_OUTBOX_TABLE } from './outbox-message.entity';
import { createLockTable, dropLockTable } from '../sql/dialects/aggregate-lock-buckets.sql';
import { OutboxTable, type OutboxTableLocation } from '../sql/dialects/outbox-table';
import { migrationNameStem } from './create-outbox-table.migration';

const MIGRATION_TIMESTAMP = 1767484800000;

type MigrationClass = new () => MigrationInterface;

const isMariaDb = (queryRunner: QueryRunner) => ['mariadb', 'mysql'].includes(queryRunner.connection.options.type);

/**
 * For MariaDB/MySQL outbox tables made before the aggregates' commit-order locks moved to
 * `<table>_locks` (they were GET_LOCK): adds that table with its bucket rows, which every write
 * locks. Does nothing where `CreateOutboxTable` already made it, nor on other databases, so it is
 * safe in any list, after `CreateOutboxTable`.
 */
export function createOutboxLocksTableMigration(location: string | OutboxTableLocation = DEFAULT_OUTBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = OutboxTable.of(location);
  const migrationName = `AddOutboxLocksTable${migrationNameStem(table)}${timestamp}`;
  return class AddOutboxLocksTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      if (!isMariaDb(queryRunner)) return;
      const located = OutboxTable.on(queryRunner.connection.options.type, table);
      if (await queryRunner.hasTable(located.locks.toString())) return;
      for (const sql of createLockTable(located)) await queryRunner.query(sql);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      if (isMariaDb(queryRunner)) await queryRunner.query(dropLockTable(OutboxTable.on(queryRunner.connection.options.type, table)));
    }
  };
}
