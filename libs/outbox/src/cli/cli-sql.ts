import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { outboxDdl, outboxSqlScript, type OutboxDdlDialect, type OutboxDdlOptions, type OutboxDdlTable } from '../migrations/outbox-ddl';
import { drizzleMigrationSql, prismaMigrationFile } from '../migrations/sql-migration-files';
import type { OutboxTable } from '../sql/dialects/outbox-table';
import { CliError } from './cli.error';
import { badDialect, badFormat, badPartitionBy, badTables, migrationExists, outNeedsPrisma, partitionByNeedsPostgres } from './cli.messages';

export const SQL_OPTIONS = {
  format: { type: 'string' },
  tables: { type: 'string' },
  out: { type: 'string' },
  'partition-by': { type: 'string' },
} as const;

interface SqlValues {
  dialect?: string;
  format?: string;
  tables?: string;
  out?: string;
  'inbox-table'?: string;
  'poison-table'?: string;
  'partition-by'?: string;
}

const DIALECTS: Record<string, OutboxDdlDialect> = { postgres: 'postgres', sqlite: 'sqlite', mariadb: 'mariadb', mysql: 'mariadb' };
const FORMATS = ['sql', 'prisma', 'drizzle'];
const TABLES = ['outbox', 'inbox', 'poison'];

/** `nest-outbox sql`: the DDL of the tables as plain SQL, a Prisma migration or a drizzle-kit custom migration. */
export function printSql(values: SqlValues, table: OutboxTable, io: { out(line: string): void }): number {
  const dialect = Object.hasOwn(DIALECTS, values.dialect ?? '') ? DIALECTS[values.dialect!] : undefined;
  if (!dialect) throw new CliError(badDialect(values.dialect));
  const format = values.format ?? 'sql';
  if (!FORMATS.includes(format)) throw new CliError(badFormat(format));
  const tables = (values.tables ?? 'outbox').split(',').map((name) => name.trim());
  if (tables.some((name) => !TABLES.includes(name))) throw new CliError(badTables(values.tables!));
  if (values.out !== undefined && format !== 'prisma') throw new CliError(outNeedsPrisma());
  const partitionBy = values['partition-by'];
  if (partitionBy !== undefined && partitionBy !== 'day' && partitionBy !== 'hour') throw new CliError(badPartitionBy(partitionBy));
  if (partitionBy !== undefined && dialect !== 'postgres') throw new CliError(partitionByNeedsPostgres(dialect));
  const options: OutboxDdlOptions = {
    dialect,
    tables: tables as OutboxDdlTable[],
    tableName: table.name,
    schema: table.schema,
    inboxTable: values['inbox-table'],
    poisonTable: values['poison-table'],
    ...(partitionBy === undefined ? {} : { partitioning: { interval: partitionBy } }),
  };
  if (format === 'drizzle') io.out(drizzleMigrationSql(options));
  else if (format === 'prisma') return prisma(options, values.out, io);
  else io.out(outboxSqlScript(outboxDdl(options).up));
  return 0;
}

function prisma(options: OutboxDdlOptions, out: string | undefined, io: { out(line: string): void }): number {
  const file = prismaMigrationFile(options);
  if (out === undefined) {
    io.out(file.contents);
    return 0;
  }
  const path = join(out, file.path);
  // Prisma records each migration's checksum: an applied migration must never be rewritten.
  if (existsSync(path)) throw new CliError(migrationExists(path));
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, file.contents, { flag: 'wx' });
  io.out(`Wrote ${path}: "prisma migrate deploy" (or "migrate dev") applies it.`);
  // Without this, "prisma migrate dev" diffs schema.prisma, which has no model of these tables, and drops them.
  io.out(`Declare the tables external in prisma.config.ts, so that "prisma migrate dev" leaves them alone:`);
  io.out(`  experimental: { externalTables: true },\n  tables: { external: ${JSON.stringify(file.tables)} },`);
  return 0;
}
