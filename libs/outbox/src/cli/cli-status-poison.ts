import type { SqlConnection } from '../core/sql-connection.port';
import { tableExists } from '../sql/table-exists';
import { isIdentifier } from '../core/names';
import { summarizePoison, type PoisonSummary } from '../core/poison/poison-summary';
import { DEFAULT_INBOX_TABLE } from '../sql/inbox/inbox-sql.dialect';
import { DEFAULT_POISON_TABLE } from '../sql/poison/poison-sql.dialect';
import { cliPoisonStore } from './cli-poison.store';
import { CliError } from './cli.error';
import { badPoisonTable } from './cli-poison.messages';

export interface PoisonTables {
  'poison-table'?: string;
  'inbox-table'?: string;
}

/** Checks `--poison-table` and `--inbox-table` before anything connects. */
export function checkPoisonTables(values: PoisonTables): void {
  for (const option of ['poison-table', 'inbox-table'] as const) {
    const value = values[option];
    if (value !== undefined && !isIdentifier(value)) throw new CliError(badPoisonTable(option, value));
  }
}

/**
 * The inbox's poison records for `status`, or `undefined` when the database has no poison table
 * (an app without `OutboxInboxModule`): status then says nothing of them. The table is looked up as
 * the `poison` commands use it, unqualified (on PostgreSQL, on the connection's search_path).
 */
export async function readPoisonSummary(connection: SqlConnection, values: PoisonTables, now: number): Promise<PoisonSummary | undefined> {
  const table = values['poison-table'] ?? DEFAULT_POISON_TABLE;
  if (!(await tableExists(connection, table))) return undefined;
  const store = cliPoisonStore(connection, table, values['inbox-table'] ?? DEFAULT_INBOX_TABLE);
  return summarizePoison(await store.counts(), now);
}

/** The text lines of `status` for the poison records. */
export function poisonStatusLines(summary: PoisonSummary, seconds: (ms: number | null) => string): string[] {
  return [
    `poison set aside ${summary.waiting}  oldest ${seconds(summary.oldestWaitingAgeMs)}`,
    ...summary.consumers.map(
      (c) => `  poison ${c.consumer}: set aside ${c.waiting} (replay requested ${c.replayRequested}), failing ${c.failing}, oldest ${seconds(c.oldestWaitingAgeMs)}`,
    ),
  ];
}
