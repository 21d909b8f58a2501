import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DEFAULT_OUTBOX_TABLE } from './outbox-message.entity';
import { createPayloadTable, dropPayloadTable } from '../sql/claim-check/payload-table.sql';
import { OutboxTable, type OutboxTableLocation } from '../sql/dialects/outbox-table';
import type { SqlDialectName } from '../core/sql-transaction.port';
import { migrationNameStem } from './create-outbox-table.migration';

const MIGRATION_TIMESTAMP = 1795910400000;

type MigrationClass = new () => MigrationInterface;

/**
 * For outbox tables created before the claim check existed: adds `<table>_payloads`, where the claim
 * check (option `claimCheck`) stores large payloads. Does nothing where `CreateOutboxTable` already
 * made it, so it is safe in any list.
 */
export function createOutboxPayloadsTableMigration(location: string | OutboxTableLocation = DEFAULT_OUTBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const table = OutboxTable.of(location);
  const migrationName = `AddOutboxPayloadsTable${migrationNameStem(table)}${timestamp}`;
  return class AddOutboxPayloadsTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      const located = OutboxTable.on(queryRunner.connection.options.type, table);
      if (await queryRunner.hasTable(located.payloads.toString())) return;
      for (const statement of createPayloadTable(located, dialectOf(queryRunner))) await queryRunner.query(statement);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(dropPayloadTable(OutboxTable.on(queryRunner.connection.options.type, table), dialectOf(queryRunner)));
    }
  };
}

/** The migration for the default table name, `outbox_messages`. */
export const AddOutboxPayloadsTable = createOutboxPayloadsTableMigration();

function dialectOf(queryRunner: QueryRunner): SqlDialectName {
  const type = queryRunner.connection.options.type;
  return type === 'mariadb' || type === 'mysql' ? 'mariadb' : type === 'postgres' ? 'postgres' : 'sqlite';
}
