import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidIdentifier } from '../core/outbox.messages';
import { isIdentifier } from '../core/names';
import { tableDialectFor } from '../sql/outbox-sql.factory';
import { DEFAULT_OUTBOX_TABLE, OutboxTable } from '../sql/dialects/outbox-table';
import { DEFAULT_INBOX_TABLE, inboxDialectFor } from '../sql/inbox/inbox-sql.dialect';
import { DEFAULT_POISON_TABLE, poisonDialectFor } from '../sql/poison/poison-sql.dialect';
import { badDdlDialect, badDdlTables } from './migrations.messages';
import type { OutboxPartitioning } from '../core/partitioning/outbox-partitioning';

export type OutboxDdlDialect = 'postgres' | 'mariadb' | 'sqlite';

export type OutboxDdlTable = 'outbox' | 'inbox' | 'poison';

export interface OutboxDdlOptions {
  /** The database family: `postgres`, `mariadb` (also MySQL) or `sqlite`. Required. */
  dialect: OutboxDdlDialect;
  /** Which tables. Default `['outbox']`; add `inbox` for `OutboxDataLayerInbox`/`OutboxInboxModule`, `poison` for the inbox's poison policy. */
  tables?: readonly OutboxDdlTable[];
  /** The outbox table (and its `<name>_paused` and `<name>_payloads` tables; on MariaDB/MySQL also `<name>_locks`). Default `outbox_messages`. */
  tableName?: string;
  /**
   * PostgreSQL schema of the outbox table, created if missing and never dropped. Default: none
   * (the search_path decides). The inbox and poison tables are named without it, as the inbox's
   * own statements name them.
   */
  schema?: string;
  /** The inbox table. Default `outbox_inbox`. */
  inboxTable?: string;
  /** The poison table. Default `outbox_inbox_poison`. */
  poisonTable?: string;
  /** PostgreSQL only: the outbox table partitioned by `created_at` (give the module the same). Default: none, a plain table. */
  partitioning?: OutboxPartitioning;
}

/** The statements that create (`up`) and drop (`down`) the tables, one statement per entry, without a trailing `;`. */
export interface OutboxDdl {
  readonly dialect: OutboxDdlDialect;
  /** The tables `up` creates, `schema.name` where a schema is given: what a tool that must leave them alone is told (Prisma's `tables.external`). */
  readonly tables: string[];
  readonly up: string[];
  readonly down: string[];
}

const DRIVERS: Record<OutboxDdlDialect, string> = { postgres: 'postgres', mariadb: 'mariadb', sqlite: 'better-sqlite3' };
const ORDER: readonly OutboxDdlTable[] = ['outbox', 'inbox', 'poison'];

/**
 * The DDL of the outbox, inbox and poison tables: the very statements the TypeORM migrations
 * (`CreateOutboxTable`, `CreateInboxTable`, `CreateInboxPoisonTable`) run, so that every data
 * layer's migration creates the same tables. Names are validated before any SQL is built.
 */
export function outboxDdl(options: OutboxDdlOptions): OutboxDdl {
  const driver = Object.hasOwn(DRIVERS, options?.dialect ?? '') ? DRIVERS[options.dialect] : undefined;
  if (!driver) throw new OutboxConfigurationError(badDdlDialect(options?.dialect));
  const tables = options.tables ?? ['outbox'];
  if (!Array.isArray(tables) || tables.length === 0 || tables.some((table) => !ORDER.includes(table))) throw new OutboxConfigurationError(badDdlTables(tables));
  const inboxTable = identifier('The inbox table name', options.inboxTable ?? DEFAULT_INBOX_TABLE);
  const poisonTable = identifier('The poison table name', options.poisonTable ?? DEFAULT_POISON_TABLE);
  const statementsOf = (table: OutboxDdlTable) => {
    if (table === 'outbox') {
      return tableDialectFor(driver, { tableName: options.tableName ?? DEFAULT_OUTBOX_TABLE, schema: options.schema }, { partitioning: options.partitioning });
    }
    if (table === 'inbox') return inboxDialectFor(driver, inboxTable);
    return poisonDialectFor(driver, poisonTable, inboxTable);
  };
  const chosen = ORDER.filter((table) => tables.includes(table)).map(statementsOf);
  const outbox = OutboxTable.of({ tableName: options.tableName ?? DEFAULT_OUTBOX_TABLE, schema: options.schema });
  // MariaDB/MySQL: the aggregates' commit-order locks are rows of `<table>_locks` (see aggregate-lock-buckets.sql).
  const outboxTables = [outbox.toString(), outbox.paused.toString(), ...(options.dialect === 'mariadb' ? [outbox.locks.toString()] : []), outbox.payloads.toString()];
  const names = { outbox: outboxTables, inbox: [inboxTable], poison: [poisonTable] };
  return {
    dialect: options.dialect,
    tables: ORDER.filter((table) => tables.includes(table)).flatMap((table) => names[table]),
    up: chosen.flatMap((table) => table.createTable()).map(tidy),
    // Dropped in the reverse order of creation.
    down: chosen.reverse().flatMap((table) => table.dropTable()).map(tidy),
  };
}

function identifier(what: string, name: string): string {
  if (!isIdentifier(name)) throw new OutboxConfigurationError(invalidIdentifier(what, name));
  return name;
}

/** The statements as one SQL script, each ended by `;` and a blank line. */
export function outboxSqlScript(statements: readonly string[], separator = '\n'): string {
  return statements.map((statement) => `${statement};\n`).join(separator);
}

/**
 * The dialects write their DDL indented to sit in TypeScript source; a file reads better with the
 * columns two spaces in. Only leading whitespace changes: the SQL is the same to the database.
 */
function tidy(statement: string): string {
  const [first, ...rest] = statement.split('\n');
  const indents = rest.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length);
  const cut = indents.length === 0 ? 0 : Math.min(...indents);
  return [first, ...rest.map((line) => `  ${line.slice(cut)}`)].join('\n');
}
