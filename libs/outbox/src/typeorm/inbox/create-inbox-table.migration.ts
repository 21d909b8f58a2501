import type { MigrationInterface, QueryRunner } from 'typeorm';
import { validateTableName } from '../../core/outbox-options';
import { DEFAULT_INBOX_TABLE, inboxDialectFor } from './inbox-sql.dialect';

const MIGRATION_TIMESTAMP = 1767312000000;

type MigrationClass = new () => MigrationInterface;

/** A TypeORM migration that creates an inbox table (consumer, message id, processed at) on the database it runs on. */
export function createInboxTableMigration(tableName: string = DEFAULT_INBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = validateTableName(tableName);
  // TypeORM reads the migration's timestamp from the last 13 digits of its name.
  const migrationName = `CreateInboxTable${table.replace(/[^A-Za-z0-9]/g, '')}${timestamp}`;
  return class CreateInboxTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const sql of inboxDialectFor(queryRunner.connection.options.type, table).createTable()) await queryRunner.query(sql);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      for (const sql of inboxDialectFor(queryRunner.connection.options.type, table).dropTable()) await queryRunner.query(sql);
    }
  };
}

/** The migration for the default inbox table, `outbox_inbox`. */
export const CreateInboxTable = createInboxTableMigration();
