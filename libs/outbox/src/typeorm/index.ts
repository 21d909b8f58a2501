// @nest-outbox/outbox/typeorm: the TypeORM pieces behind OutboxModule, for other table names and
// for relays, inboxes and stats run without the Nest module. The default migrations are in the root.
export { outboxMessageEntity, DEFAULT_OUTBOX_TABLE, type OutboxMessageRow } from './outbox-message.entity';
export { createOutboxTableMigration, type OutboxTableMigrationOptions } from './create-outbox-table.migration';
export { createOutboxLocksTableMigration } from './add-locks-table.migration';
export { createInboxTableMigration } from './inbox/create-inbox-table.migration';
export { createInboxPoisonTableMigration } from './poison/create-poison-table.migration';
// The claim check's payloads table, to read payloads of another database (OutboxInboxModule's claimCheck.readers).
export { DatabasePayloadStore } from '../sql/claim-check/database-payload.store';
export { createOutboxPayloadsTableMigration, AddOutboxPayloadsTable } from './add-payloads-table.migration';
export { createSqlOutboxStore, createSqlOutboxMaintenanceStore, createSqlOutboxPartitionStore, createSqlOutboxStatsSource } from './outbox-sql.factory';
export { TypeOrmInbox } from './inbox/typeorm-inbox';
export { TypeOrmInboxStore } from './inbox/typeorm-inbox.store';
export { TypeOrmPoisonStore } from './poison/typeorm-poison.store';
export { DEFAULT_INBOX_TABLE } from '../sql/inbox/inbox-sql.dialect';
export { DEFAULT_POISON_TABLE } from '../sql/poison/poison-sql.dialect';
export { runMigrationsUnderLock } from './migration-lock/run-migrations-under-lock';
export { MigrationLockTimeoutError } from './migration-lock/migration-lock.error';
export { MIGRATION_LOCK_POSTGRES_KEY, DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, type MigrationLockOptions, type MigrationLockLogger } from './migration-lock/migration-lock.options';
