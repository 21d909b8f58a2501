import type { MigrationInterface, QueryRunner } from 'typeorm';
import { validateTableName } from '../../core/outbox-options';
import { DEFAULT_OUTBOX_TABLE } from '../outbox-message.entity';
import { createPausedTable, dropPausedTable, pausedTableName, type PauseDialect } from '../dialects/paused-destinations.sql';

const MIGRATION_TIMESTAMP = 1767312000000;

type MigrationClass = new () => MigrationInterface;

/**
 * For outbox tables created before paused destinations existed: adds `<table>_paused`, which every
 * claim reads. Does nothing where `CreateOutboxTable` already made it, so it is safe in any list.
 */
export function createOutboxPausedTableMigration(tableName: string = DEFAULT_OUTBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = validateTableName(tableName);
  const migrationName = `AddOutboxPausedTable${table.replace(/[^A-Za-z0-9]/g, '')}${timestamp}`;
  return class AddOutboxPausedTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      if (await queryRunner.hasTable(pausedTableName(table))) return;
      await queryRunner.query(createPausedTable(table, dialectOf(queryRunner)));
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(dropPausedTable(table, dialectOf(queryRunner)));
    }
  };
}

/** The migration for the default table name, `outbox_messages`. */
export const AddOutboxPausedTable = createOutboxPausedTableMigration();

function dialectOf(queryRunner: QueryRunner): PauseDialect {
  const type = queryRunner.connection.options.type;
  return type === 'mariadb' || type === 'mysql' ? 'mariadb' : type === 'postgres' ? 'postgres' : 'sqlite';
}
