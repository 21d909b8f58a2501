import type { MigrationInterface, QueryRunner } from 'typeorm';
import { validateTableName } from '../core/names';

export type MigrationClass = new () => MigrationInterface;

/** The DDL of one table for the database a migration runs on. */
export type TableStatements = (driverType: string, table: string) => { createTable(): string[]; dropTable(): string[] };

/**
 * A TypeORM migration class that creates one table, named `<className><table><timestamp>`: TypeORM
 * reads the migration's timestamp from the last 13 digits of its name, and the table in the name
 * keeps two migrations of the same kind (two inbox tables) apart.
 */
export function tableMigration(className: string, tableName: string, timestamp: number, statements: TableStatements): MigrationClass {
  const table = validateTableName(tableName);
  const migrationName = `${className}${table.replace(/[^A-Za-z0-9]/g, '')}${timestamp}`;
  const migration = class implements MigrationInterface {
    readonly name = migrationName;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const sql of statements(queryRunner.connection.options.type, table).createTable()) await queryRunner.query(sql);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      for (const sql of statements(queryRunner.connection.options.type, table).dropTable()) await queryRunner.query(sql);
    }
  };
  Object.defineProperty(migration, 'name', { value: className });
  return migration;
}
