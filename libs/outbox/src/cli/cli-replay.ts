import { userInfo } from 'node:os';
import { readInstant } from '../core/console/console-input';
import { OutboxReplay, type ReplayOutcome } from '../core/replay/outbox-replay';
import type { ReplayFilter } from '../core/replay/replay.port';
import { nameProblem } from '../core/names';
import type { SqlConnection } from '../core/sql-connection.port';
import type { OutboxTable } from '../sql/dialects/outbox-table';
import { createSqlReplayStore } from '../sql/outbox-sql.factory';
import { CliError } from './cli.error';
import { notAnId } from './cli.messages';
import type { CliIo } from './cli-io';
import { replayAllWithFilter, replayBadFlag, replayNeedsFilterFlag, replayNeedsReasonFlag, replayTwoBounds } from './cli-replay.messages';

/** Options of `replay`, merged into the CLI's option table (it shares --type, --destination, --reason, --from/--to … with `dead`). */
export const REPLAY_OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  all: { type: 'boolean' },
  by: { type: 'string' },
} as const;

export interface ReplayValues {
  type?: string;
  'aggregate-type'?: string;
  'aggregate-id'?: string;
  destination?: string;
  since?: string;
  until?: string;
  from?: string;
  to?: string;
  reason?: string;
  by?: string;
  all?: boolean;
  'dry-run'?: boolean;
  json?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CheckedReplay {
  filter: ReplayFilter;
  reason: string;
  by: string;
  all: boolean;
}

/** Checks `replay`'s flags before connecting: every refusal names the flag and what to pass. */
export function checkReplayCommand(id: string | undefined, values: ReplayValues, env: NodeJS.ProcessEnv): CheckedReplay {
  if (id !== undefined && !UUID.test(id)) throw new CliError(notAnId(id));
  const reason = values.reason?.trim() ?? '';
  if (nameProblem(reason, 500)) throw new CliError(replayNeedsReasonFlag());
  const by = (values.by ?? env.USER ?? osUser()).trim();
  if (nameProblem(by)) throw new CliError(replayBadFlag('by', values.by ?? by, 'who asks: a non-blank name of at most 255 characters, without control characters'));
  for (const flag of ['type', 'aggregate-type', 'aggregate-id', 'destination'] as const) {
    const value = values[flag];
    if (value !== undefined && nameProblem(value)) throw new CliError(replayBadFlag(flag, value, `${nameProblem(value)}; pass the value as the messages carry it`));
  }
  const filter: ReplayFilter = {
    id,
    type: values.type,
    aggregateType: values['aggregate-type'],
    aggregateId: values['aggregate-id'],
    destination: values.destination,
    from: bound(values, 'since', 'from'),
    to: bound(values, 'until', 'to'),
  };
  const narrowed = Object.values(filter).some((value) => value !== undefined);
  if (values.all && narrowed) throw new CliError(replayAllWithFilter());
  if (!narrowed && !values.all) throw new CliError(replayNeedsFilterFlag());
  if (filter.from && filter.to && filter.from >= filter.to) {
    throw new CliError(replayBadFlag('until', values.until ?? values.to ?? '', `it must be later than --since (${filter.from.toISOString()})`));
  }
  return { filter, reason, by: `${by} (nest-outbox)`, all: values.all === true };
}

export async function runReplayCommand(connection: SqlConnection, table: OutboxTable, checked: CheckedReplay, values: ReplayValues, io: CliIo): Promise<number> {
  const outcome = await new OutboxReplay(createSqlReplayStore(connection, table)).replay({ ...checked, dryRun: values['dry-run'] === true });
  if (values.json) io.out(JSON.stringify(outcome, null, 2));
  else for (const line of describe(outcome, checked.reason)) io.out(line);
  return 0;
}

function describe(outcome: ReplayOutcome, reason: string): string[] {
  const lines: string[] = [];
  if (outcome.dryRun) lines.push(`${outcome.matched} published message(s) match; nothing replayed (dry run).`);
  else if (outcome.matched === 0) lines.push('No published message matches: nothing replayed.');
  else {
    lines.push(
      `${outcome.replayed} message(s) replayed (replay ${outcome.replayId}, reason ${JSON.stringify(reason)}): pending again with their own ids, ` +
        'the relay publishes them to their destinations in their original order.',
    );
    if (outcome.replayed < outcome.matched) lines.push(`${outcome.matched - outcome.replayed} matching message(s) changed meanwhile (cleaned up, or replayed by someone else) and were left alone.`);
    if (outcome.waiting > 0) {
      lines.push(`${outcome.waiting} of them wait behind a newer message of their aggregate that a relay had in flight; they go out after it, by ${outcome.heldUntil} at the latest.`);
    }
  }
  if (outcome.note) lines.push(outcome.note);
  return lines;
}

// `--since`/`--until` are the replay's names of the filter's `--from`/`--to`; either spelling works, not both.
function bound(values: ReplayValues, name: 'since' | 'until', alias: 'from' | 'to'): Date | undefined {
  if (values[name] !== undefined && values[alias] !== undefined) throw new CliError(replayTwoBounds(name, alias));
  const flag = values[name] !== undefined ? name : alias;
  const value = values[flag];
  if (value === undefined) return undefined;
  const date = readInstant(value);
  if (!date) throw new CliError(replayBadFlag(flag, value, 'expected an ISO-8601 time such as 2026-01-31T12:00:00Z (years 1 to 9999)'));
  return date;
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
