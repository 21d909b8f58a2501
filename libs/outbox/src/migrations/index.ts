// @nest-outbox/outbox/migrations: the outbox, inbox and poison tables in the migration form of the data
// layers other than TypeORM (docs/migrations.md). Each form loads its ORM only when it is called.
export { outboxDdl, outboxSqlScript, type OutboxDdl, type OutboxDdlOptions, type OutboxDdlDialect, type OutboxDdlTable } from './outbox-ddl';
export { prismaMigrationFile, drizzleMigrationSql, type MigrationFile } from './sql-migration-files';
export { outboxKyselyMigration, type OutboxKyselyMigration } from './kysely-migration';
export { outboxMikroOrmMigration, type OutboxMikroOrmMigrationClass } from './mikro-orm-migration';
