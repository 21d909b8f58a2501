import type { SqlConnection } from '../core/sql-connection.port';
import { POISON_STATES, type PoisonRecord, type PoisonState } from '../core/poison/poison.port';
import { DEFAULT_INBOX_TABLE } from '../sql/inbox/inbox-sql.dialect';
import { DEFAULT_POISON_TABLE } from '../sql/poison/poison-sql.dialect';
import { cliPoisonStore } from './cli-poison.store';
import { CliError } from './cli.error';
import {
  badPoisonLimit,
  badPoisonName,
  badPoisonState,
  cannotRequestReplay,
  noRecord,
  poisonNeedsRecord,
  poisonNeedsSubcommand,
  recordDeleted,
  replayRequested,
} from './cli-poison.messages';
import type { CliIo } from './cli-io';
import { checkPoisonTables } from './cli-status-poison';

/** Options of the `poison` commands, merged into the CLI's option table. */
export const POISON_OPTIONS = {
  consumer: { type: 'string' },
  state: { type: 'string' },
  'poison-table': { type: 'string' },
  'inbox-table': { type: 'string' },
} as const;


interface PoisonValues {
  consumer?: string;
  state?: string;
  limit?: string;
  json?: boolean;
  'poison-table'?: string;
  'inbox-table'?: string;
}

const CONTROL = /[\u0000-\u001f\u007f]/;

/** Checks the arguments before connecting, so bad input never reaches the database. */
export function checkPoisonCommand(args: string[], values: PoisonValues): void {
  const [sub, consumer, key] = args;
  if (!['list', 'show', 'replay', 'delete'].includes(sub ?? '')) throw new CliError(poisonNeedsSubcommand());
  if (sub !== 'list' && (consumer === undefined || key === undefined)) throw new CliError(poisonNeedsRecord(sub));
  for (const [label, value] of [['consumer', consumer ?? values.consumer], ['key', key]] as const) {
    if (value !== undefined && (value === '' || value.length > 255 || CONTROL.test(value))) {
      throw new CliError(badPoisonName(label, value));
    }
  }
  if (values.state !== undefined && !(POISON_STATES as readonly string[]).includes(values.state)) {
    throw new CliError(badPoisonState(POISON_STATES, values.state));
  }
  if (values.limit !== undefined && !/^\d{1,4}$/.test(values.limit)) throw new CliError(badPoisonLimit(values.limit));
  checkPoisonTables(values);
}

export async function runPoisonCommand(connection: SqlConnection, args: string[], values: PoisonValues, io: CliIo): Promise<number> {
  const [sub, consumer, key] = args;
  const store = cliPoisonStore(connection, values['poison-table'] ?? DEFAULT_POISON_TABLE, values['inbox-table'] ?? DEFAULT_INBOX_TABLE);
  if (sub === 'list') {
    const records = await store.list({ consumer: values.consumer, state: values.state as PoisonState | undefined, limit: Number(values.limit ?? 100) || 100 });
    if (values.json) io.out(JSON.stringify(records, null, 2));
    else for (const r of records) io.out([r.consumer, r.key, r.state, `${r.attempts} attempts`, r.lastFailedAt, r.reason].join('\t'));
    return 0;
  }
  const record = await store.get(consumer, key);
  if (!record) throw new CliError(noRecord(consumer, key));
  switch (sub) {
    case 'show':
      io.out(JSON.stringify(record, null, 2));
      return 0;
    case 'replay':
      if (!(await store.requestReplay(consumer, key))) throw new CliError(notReplayable(record));
      io.out(replayRequested(consumer, key));
      return 0;
    default:
      await store.remove(consumer, key);
      io.out(recordDeleted(consumer, key));
      return 0;
  }
}

function notReplayable(record: PoisonRecord): string {
  const why = record.messageId === null ? `it could not be decoded (${record.reason})` : 'only the start of the message was stored (poison.maxStoredChars)';
  return cannotRequestReplay(record.consumer, record.key, why);
}
