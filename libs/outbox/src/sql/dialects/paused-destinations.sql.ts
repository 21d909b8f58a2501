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

/**
 * For the startup probe: reads every column the console and the stats read (the pause's `reason`
 * came later than the table), so that a table lacking one fails at startup, naming the migration.
 */
export function pausedColumnsReadable(table: OutboxTable, dialect: PauseDialect = 'postgres'): string {
  return `NOT EXISTS (SELECT destination, paused_at, reason FROM ${table.paused.quoted(dialect)} WHERE 1 = 0)`;
}

/** The pause's reason, added to tables made before it existed (the same statement on every database). */
export function addPauseReason(table: OutboxTable, dialect: PauseDialect): string {
  return `ALTER TABLE ${table.paused.quoted(dialect)} ADD COLUMN reason varchar(500) NULL`;
}

export function createPausedTable(table: OutboxTable, dialect: PauseDialect): string {
  const name = table.paused.quoted(dialect);
  switch (dialect) {
    case 'postgres':
      return `CREATE TABLE ${name} (destination varchar(255) PRIMARY KEY, paused_at timestamptz NOT NULL DEFAULT now(), reason varchar(500) NULL)`;
    case 'sqlite':
      return `CREATE TABLE ${name} (destination varchar(255) PRIMARY KEY, paused_at varchar(30) NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')), reason varchar(500) NULL)`;
    case 'mariadb':
      return `CREATE TABLE ${name} (destination varchar(255) NOT NULL PRIMARY KEY, paused_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), reason varchar(500) NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  }
}

export function dropPausedTable(table: OutboxTable, dialect: PauseDialect): string {
  return `DROP TABLE IF EXISTS ${table.paused.quoted(dialect)}`;
}
