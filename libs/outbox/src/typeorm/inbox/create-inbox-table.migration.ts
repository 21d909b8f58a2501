import { tableMigration, type MigrationClass } from '../table-migration';
import { DEFAULT_INBOX_TABLE, inboxDialectFor } from '../../sql/inbox/inbox-sql.dialect';

const MIGRATION_TIMESTAMP = 1767312000000;

/** A TypeORM migration that creates an inbox table (consumer, message id, processed at) on the database it runs on. */
export function createInboxTableMigration(tableName: string = DEFAULT_INBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  return tableMigration('CreateInboxTable', tableName, timestamp, inboxDialectFor);
}

/** The migration for the default inbox table, `outbox_inbox`. */
export const CreateInboxTable = createInboxTableMigration();
