import type { OutboxTable, QuoteStyle } from './outbox-table';

/**
 * Paused destinations live in a small table next to the outbox table, `<table>_paused`, one row
 * per destination an operator holds back. Every relay's claim reads it, so a pause is shared by
 * all instances at once and survives restarts; resuming is deleting the row.
 */
export type PauseDialect = QuoteStyle;

/**
 * The one condition a claim adds for pauses: `<column> NOT IN (SELECT destination FROM <table>_paused)`.
 * A sub-select on a table of a handful of rows costs nothing next to the claim, keeps the claim's
 * plan otherwise unchanged, and is one line to carry over when the claim is rewritten.
 * `destination` is the primary key (never NULL), so NOT IN is exact.
 */
export function notPaused(column: string, table: OutboxTable, dialect: PauseDialect = 'postgres'): string {
  return `${column} NOT IN (SELECT destination FROM ${table.paused.quoted(dialect)})`;
}

export function createPausedTable(table: OutboxTable, dialect: PauseDialect): string {
  const name = table.paused.quoted(dialect);
  switch (dialect) {
    case 'postgres':
      return `CREATE TABLE ${name} (destination varchar(255) PRIMARY KEY, paused_at timestamptz NOT NULL DEFAULT now())`;
    case 'sqlite':
      return `CREATE TABLE ${name} (destination varchar(255) PRIMARY KEY, paused_at varchar(30) NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')))`;
    case 'mariadb':
      return `CREATE TABLE ${name} (destination varchar(255) NOT NULL PRIMARY KEY, paused_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  }
}

export function dropPausedTable(table: OutboxTable, dialect: PauseDialect): string {
  return `DROP TABLE IF EXISTS ${table.paused.quoted(dialect)}`;
}
