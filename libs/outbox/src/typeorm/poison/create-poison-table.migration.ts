import { tableMigration, type MigrationClass } from '../table-migration';
import { DEFAULT_POISON_TABLE, poisonDialectFor } from '../../sql/poison/poison-sql.dialect';

const MIGRATION_TIMESTAMP = 1767398400000;

/** A TypeORM migration that creates the inbox's poison table (messages set aside by the poison policy). */
export function createInboxPoisonTableMigration(tableName: string = DEFAULT_POISON_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  return tableMigration('CreateInboxPoisonTable', tableName, timestamp, poisonDialectFor);
}

/** The migration for the default poison table, `outbox_inbox_poison`. */
export const CreateInboxPoisonTable = createInboxPoisonTableMigration();
