import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DEFAULT_OUTBOX_TABLE } from '../outbox-message.entity';
import { addPauseReason, createPausedTable, dropPausedTable, type PauseDialect } from '../../sql/dialects/paused-destinations.sql';
import { OutboxTable, type OutboxTableLocation } from '../../sql/dialects/outbox-table';
import { migrationNameStem } from '../create-outbox-table.migration';

const MIGRATION_TIMESTAMP = 1767312000000;

type MigrationClass = new () => MigrationInterface;

/**
 * For outbox tables created before paused destinations existed: adds `<table>_paused`, which every
 * claim reads. Does nothing where `CreateOutboxTable` already made it, so it is safe in any list.
 */
export function createOutboxPausedTableMigration(location: string | OutboxTableLocation = DEFAULT_OUTBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = OutboxTable.of(location);
  const migrationName = `AddOutboxPausedTable${migrationNameStem(table)}${timestamp}`;
  return class AddOutboxPausedTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      const paused = OutboxTable.on(queryRunner.connection.options.type, table).paused;
      if (await queryRunner.hasTable(paused.toString())) return;
      await queryRunner.query(createPausedTable(table, dialectOf(queryRunner)));
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(dropPausedTable(OutboxTable.on(queryRunner.connection.options.type, table), dialectOf(queryRunner)));
    }
  };
}

/** The migration for the default table name, `outbox_messages`. */
export const AddOutboxPausedTable = createOutboxPausedTableMigration();

const REASON_TIMESTAMP = 1767398400000;

/**
 * For paused-destinations tables made before a pause had a reason: adds `reason` (shown by the
 * console, CLI `status` and health). Does nothing where the column exists, so it is safe in any
 * list, after `CreateOutboxTable` or `AddOutboxPausedTable`.
 */
export function createOutboxPauseReasonMigration(location: string | OutboxTableLocation = DEFAULT_OUTBOX_TABLE, timestamp = REASON_TIMESTAMP): MigrationClass {
  const table = OutboxTable.of(location);
  const migrationName = `AddOutboxPauseReason${migrationNameStem(table)}${timestamp}`;
  return class AddOutboxPauseReason implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      const paused = OutboxTable.on(queryRunner.connection.options.type, table).paused.toString();
      if (await queryRunner.hasColumn(paused, 'reason')) return;
      await queryRunner.query(addPauseReason(OutboxTable.on(queryRunner.connection.options.type, table), dialectOf(queryRunner)));
    }

    async down(): Promise<void> {
      // Left in place: dropping a column of the paused table would fail on SQLite before 3.35, and a spare column harms nothing.
    }
  };
}

/** The reason migration for the default table name, `outbox_messages`. */
export const AddOutboxPauseReason = createOutboxPauseReasonMigration();

function dialectOf(queryRunner: QueryRunner): PauseDialect {
  const type = queryRunner.connection.options.type;
  return type === 'mariadb' || type === 'mysql' ? 'mariadb' : type === 'postgres' ? 'postgres' : 'sqlite';
}
