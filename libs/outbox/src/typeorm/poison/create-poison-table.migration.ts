import type { MigrationInterface, QueryRunner } from 'typeorm';
import { validateTableName } from '../../core/outbox-options';
import { DEFAULT_POISON_TABLE, poisonDialectFor } from './poison-sql.dialect';

const MIGRATION_TIMESTAMP = 1767398400000;

type MigrationClass = new () => MigrationInterface;

/** A TypeORM migration that creates the inbox's poison table (messages set aside by the poison policy). */
export function createInboxPoisonTableMigration(tableName: string = DEFAULT_POISON_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = validateTableName(tableName);
  // TypeORM reads the migration's timestamp from the last 13 digits of its name.
  const migrationName = `CreateInboxPoisonTable${table.replace(/[^A-Za-z0-9]/g, '')}${timestamp}`;
  return class CreateInboxPoisonTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const sql of poisonDialectFor(queryRunner.connection.options.type, table).createTable()) await queryRunner.query(sql);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      for (const sql of poisonDialectFor(queryRunner.connection.options.type, table).dropTable()) await queryRunner.query(sql);
    }
  };
}

/** The migration for the default poison table, `outbox_inbox_poison`. */
export const CreateInboxPoisonTable = createInboxPoisonTableMigration();
