import type { MigrationInterface, QueryRunner } from 'typeorm';
import { OutboxTable, type OutboxTableLocation } from '../sql/dialects/outbox-table';
import { resolvePartitioning, type OutboxPartitioning } from '../core/partitioning/outbox-partitioning';
import { tableDialectFor } from './outbox-sql.factory';
import { DEFAULT_OUTBOX_TABLE } from './outbox-message.entity';

const MIGRATION_TIMESTAMP = 1767225600000;

type MigrationClass = new () => MigrationInterface;

/** Where the table goes and, on PostgreSQL, whether it is partitioned by time (give the module the same `partitioning`). */
export interface OutboxTableMigrationOptions extends OutboxTableLocation {
  partitioning?: OutboxPartitioning;
}

/**
 * A TypeORM migration that creates an outbox table and its indexes with the types of the
 * database it runs on. Add the result to `migrations` in your DataSource options.
 * `{ tableName, schema }` puts the table in a PostgreSQL schema, created if missing; `down` drops
 * the tables only, never the schema. `{ tableName, partitioning: { interval: 'day' } }` creates it
 * partitioned by `created_at` on PostgreSQL (see docs/operating.md, "A partitioned outbox table").
 */
export function createOutboxTableMigration(table: string | OutboxTableMigrationOptions = DEFAULT_OUTBOX_TABLE, timestamp = MIGRATION_TIMESTAMP): MigrationClass {
  const located = OutboxTable.of(table);
  const partitioning = typeof table === 'object' && table.partitioning !== undefined ? resolvePartitioning(table.partitioning) : undefined;
  const options = partitioning === undefined ? {} : { partitioning };
  const migrationName = `CreateOutboxTable${migrationNameStem(located)}${timestamp}`;
  return class CreateOutboxTable implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const sql of tableDialectFor(queryRunner.connection.options.type, located, options).createTable()) await queryRunner.query(sql);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      for (const sql of tableDialectFor(queryRunner.connection.options.type, located).dropTable()) await queryRunner.query(sql);
    }
  };
}

/** The migration for the default table name, `outbox_messages`. */
export const CreateOutboxTable = createOutboxTableMigration();

/**
 * The part of a migration's name that tells tables apart: TypeORM records migrations by name, so
 * the same table in two schemas needs two names. Without a schema it is the name it always was.
 * (TypeORM reads the migration's timestamp from the last 13 digits of its name.)
 */
export function migrationNameStem(table: OutboxTable): string {
  const plain = (name: string) => name.replace(/[^A-Za-z0-9]/g, '');
  return table.schema === undefined ? plain(table.name) : `${plain(table.name)}In${plain(table.schema)}`;
}
