import type { MigrationInterface, QueryRunner } from 'typeorm';
import { validateTableName } from '../core/outbox-options';
import { tableDialectFor } from './outbox-sql.factory';
import { DEFAULT_OUTBOX_TABLE } from './outbox-message.entity';

const MIGRATION_TIMESTAMP = 1767225600000;

type MigrationClass = new () => MigrationInterface;

/**
 * A TypeORM migration that creates an outbox table and its indexes with the types of the
 * database it runs on. Add the result to `migrations` in your DataSource options.
 */
export function createOutboxTableMigration(tableName: string = DEFAULT_OUTBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = validateTableName(tableName);
  // TypeORM reads the migration's timestamp from the last 13 digits of its name.
  const migrationName = `CreateOutboxTable${table.replace(/[^A-Za-z0-9]/g, '')}${timestamp}`;
  return class CreateOutboxTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const sql of tableDialectFor(queryRunner.connection.options.type, table).createTable()) await queryRunner.query(sql);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      for (const sql of tableDialectFor(queryRunner.connection.options.type, table).dropTable()) await queryRunner.query(sql);
    }
  };
}

/** The migration for the default table name, `outbox_messages`. */
export const CreateOutboxTable = createOutboxTableMigration();
