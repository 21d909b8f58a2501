import { parseArgs } from 'node:util';
import type { SqlConnection } from '../core/sql-connection.port';
import { ConsoleError } from '../core/console/console.error';
import { MAX_DESTINATION_LENGTH, readInstant } from '../core/console/console-input';
import { OutboxConsole } from '../core/console/outbox-console';
import type { MessageFilter } from '../core/console/outbox-console.port';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidIdentifier } from '../core/outbox.messages';
import { isIdentifier, nameProblem, nameRule } from '../core/names';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { DEFAULT_OUTBOX_TABLE } from '../sql/dialects/outbox-table';
import { createSqlOutboxConsoleStore, createSqlOutboxMaintenanceStore } from '../sql/outbox-sql.factory';
import { CliError } from './cli.error';
import { badDestination, badLimit, badNumber, badPosition, badReason, badTime, missingUrl, needsArgument, notAnId, unknownCommand, USAGE } from './cli.messages';
import { connect } from './cli-connection';
import { redactText, secretsOf, urlsOf } from './cli-redaction';
import { printStatus } from './cli-status';
import { checkPoisonCommand, POISON_OPTIONS, runPoisonCommand } from './cli-poison';
import { checkPoisonTables } from './cli-status-poison';
import { runWalCommand } from './cli-wal-slot';
import { printSql, SQL_OPTIONS } from './cli-sql';
import { checkReplayCommand, REPLAY_OPTIONS, runReplayCommand } from './cli-replay';
import { showMessage } from './cli-show';
import type { CliIo } from './cli-io';
import { ASYNCAPI_OPTIONS, runAsyncApiCommand } from './cli-asyncapi';
import { SCHEMAS_OPTIONS, runSchemasCommand } from './cli-schemas';


const OPTIONS = {
  url: { type: 'string' },
  schema: { type: 'string' },
  table: { type: 'string' },
  'max-lag': { type: 'string' },
  'max-dead': { type: 'string' },
  json: { type: 'boolean' },
  limit: { type: 'string' },
  after: { type: 'string' },
  'dry-run': { type: 'boolean' },
  reason: { type: 'string' },
  'confirm-unknown': { type: 'boolean' },
  type: { type: 'string' },
  'aggregate-type': { type: 'string' },
  'aggregate-id': { type: 'string' },
  destination: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  dialect: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  ...POISON_OPTIONS,
  ...SQL_OPTIONS,
  ...REPLAY_OPTIONS,
  ...ASYNCAPI_OPTIONS,
  ...SCHEMAS_OPTIONS,
} as const;

type Parsed = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

const MAX_LIMIT = 10_000;
const MAX_POSITION = 9_223_372_036_854_775_807n;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Runs one command; resolves to the exit code. Errors of input or connection are printed, never
 * thrown, and every printed line goes through the redaction: no password of a URL is ever shown.
 */
export async function runCli(argv: string[], raw: CliIo): Promise<number> {
  const secrets = urlsOf(argv, raw.env).flatMap(secretsOf);
  const io: CliIo = { env: raw.env, out: (line) => raw.out(redactText(line, secrets)), err: (line) => raw.err(redactText(line, secrets)) };
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    }
    const { values, positionals } = parsed;
    if (values.help || positionals.length === 0) {
      io.out(USAGE);
      return values.help ? 0 : 2;
    }
    return await run(positionals, values, io);
  } catch (error) {
    if (error instanceof CliError || error instanceof ConsoleError || error instanceof OutboxConfigurationError) {
      io.err(`nest-outbox: ${error.message}`);
      return 2;
    }
    // A database error (a missing table, a lost connection): nothing was changed by this command.
    io.err(`nest-outbox: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return 2;
  }
}

async function run(positionals: string[], values: Parsed, io: CliIo): Promise<number> {
  const [command, sub, argument] = positionals;
  // The schema qualifies the table in every statement, as the module's `schema` option does: the
  // search_path is left alone, so the table is found in that schema whatever the server's setting.
  if (values.schema !== undefined && !isIdentifier(values.schema)) throw new CliError(invalidIdentifier('Option --schema', values.schema));
  if (values.table !== undefined && !isIdentifier(values.table)) throw new CliError(invalidIdentifier('Option --table', values.table));
  const table = OutboxTable.of({ tableName: values.table ?? DEFAULT_OUTBOX_TABLE, schema: values.schema });
  if (command === 'sql') return printSql(values, table, io);
  if (command === 'asyncapi') return runAsyncApiCommand(positionals.slice(1), values, io);
  if (command === 'schemas') return runSchemasCommand(positionals.slice(1), values, io);
  if (command === 'poison') return poison(positionals.slice(1), values, io);
  if (command === 'wal') return runWalCommand(sub, argument, table, { url: values.url ?? io.env.OUTBOX_DATABASE_URL, force: values.force === true }, io);
  if (command === 'replay' || command === 'show') return replayOrShow(command, sub, values, table, io);
  const known = ['status', 'dead', 'pause', 'resume', 'paused', 'retry-now'];
  if (!known.includes(command)) throw new CliError(unknownCommand(command));
  if (command === 'dead' && !['list', 'requeue', 'discard'].includes(sub ?? '')) throw new CliError(needsArgument('dead', 'list, requeue or discard'));
  if ((command === 'pause' || command === 'resume') && sub === undefined) throw new CliError(needsArgument(command, 'a destination'));
  if (command === 'pause' || command === 'resume') {
    const problem = nameProblem(sub, MAX_DESTINATION_LENGTH);
    if (problem) throw new CliError(badDestination(command, sub!, problem, nameRule(MAX_DESTINATION_LENGTH)));
  }
  const thresholds = { maxLagMs: seconds(values, 'max-lag'), maxDead: count(values, 'max-dead') };
  const filter = filterOf(values);
  // Checked here too, so that bad input fails before anything connects.
  position(values.after);
  count(values, 'limit');
  if (command === 'dead' && sub !== 'list' && argument !== undefined && !UUID.test(argument)) throw new CliError(notAnId(argument));
  if (command === 'retry-now' && sub !== undefined && !UUID.test(sub)) throw new CliError(notAnId(sub));
  if (command === 'status') checkPoisonTables(values);
  if (values.reason !== undefined && (values.reason.length > 500 || values.reason.includes('\u0000'))) throw new CliError(badReason());
  const url = values.url ?? io.env.OUTBOX_DATABASE_URL;
  if (!url) throw new CliError(missingUrl());
  const opened = await connect(url);
  try {
    return await runOn(opened.connection, table, { command, sub, argument }, { values, thresholds, filter }, io);
  } finally {
    await opened.close();
  }
}

async function runOn(
  connection: SqlConnection,
  table: OutboxTable,
  { command, sub, argument }: { command: string; sub?: string; argument?: string },
  { values, thresholds, filter }: { values: Parsed; thresholds: { maxLagMs?: number; maxDead?: number }; filter: MessageFilter },
  io: CliIo,
): Promise<number> {
  if (command === 'status') return printStatus(connection, table, thresholds, values.json === true, io, values);
  const maintenance = createSqlOutboxMaintenanceStore(connection, table);
  const operator = new OutboxConsole(createSqlOutboxConsoleStore(connection, table), maintenance);
  switch (command) {
    case 'paused': {
      const paused = await operator.paused();
      if (paused.length === 0) io.out('No destination is paused.');
      for (const destination of paused) io.out(`${destination.destination}\tpaused since ${destination.pausedAt}${destination.reason ? `\t${destination.reason}` : ''}`);
      return 0;
    }
    case 'pause': {
      const changed = await operator.pause(sub!, { reason: values.reason, confirmUnknown: values['confirm-unknown'] === true });
      io.out(changed ? `Paused "${sub}": no relay publishes to it until it is resumed.` : `"${sub}" was already paused.`);
      return 0;
    }
    case 'retry-now':
      return retryNow(operator, sub, filter, values['dry-run'] === true, io);
    case 'resume':
      io.out((await operator.resume(sub!)) ? `Resumed "${sub}".` : `"${sub}" was not paused.`);
      return 0;
  }
  if (sub === 'list') {
    const dead = await maintenance.listDead(position(values.after), count(values, 'limit') ?? 100);
    if (values.json) io.out(JSON.stringify(dead, null, 2));
    else if (dead.length === 0) io.out(values.after === undefined ? 'No dead messages.' : `No dead messages after position ${values.after}.`);
    else for (const m of dead) io.out([m.position, m.id, m.type, `${m.aggregateType}/${m.aggregateId}`, m.destination, `${m.attempts} attempts`, m.lastError ?? ''].join('\t'));
    return 0;
  }
  const verb = sub === 'requeue' ? 'requeued' : 'discarded';
  if (argument !== undefined) {
    await (sub === 'requeue' ? operator.requeue(argument) : operator.discard(argument));
    io.out(`Message ${argument} ${verb}.`);
    return 0;
  }
  const dryRun = values['dry-run'] === true;
  const outcome = sub === 'requeue' ? await operator.bulkRequeue(filter, dryRun) : await operator.bulkDiscard(filter, dryRun);
  io.out(dryRun ? `${outcome.matched} dead message(s) match; nothing changed (dry run).` : `${outcome.changed} dead message(s) ${verb}.`);
  return 0;
}

async function retryNow(operator: OutboxConsole, id: string | undefined, filter: MessageFilter, dryRun: boolean, io: CliIo): Promise<number> {
  if (id !== undefined) {
    await operator.retryNow(id);
    io.out(`Message ${id} is due now; its attempts are kept.`);
    return 0;
  }
  const outcome = await operator.bulkRetryNow(filter, dryRun);
  io.out(dryRun ? `${outcome.matched} message(s) in backoff match; nothing changed (dry run).` : `${outcome.changed} message(s) in backoff are due now.`);
  return 0;
}

async function poison(args: string[], values: Parsed, io: CliIo): Promise<number> {
  checkPoisonCommand(args, values);
  const url = values.url ?? io.env.OUTBOX_DATABASE_URL;
  if (!url) throw new CliError(missingUrl());
  const opened = await connect(url);
  try {
    return await runPoisonCommand(opened.connection, args, values, io);
  } finally {
    await opened.close();
  }
}

async function replayOrShow(command: 'replay' | 'show', id: string | undefined, values: Parsed, table: OutboxTable, io: CliIo): Promise<number> {
  if (command === 'show' && id === undefined) throw new CliError(needsArgument('show', 'a message id (a UUID, the envelope\'s "id")'));
  if (command === 'show' && !UUID.test(id!)) throw new CliError(notAnId(id!));
  const replay = command === 'replay' ? checkReplayCommand(id, values, io.env) : undefined;
  const url = values.url ?? io.env.OUTBOX_DATABASE_URL;
  if (!url) throw new CliError(missingUrl());
  const opened = await connect(url);
  try {
    return replay ? await runReplayCommand(opened.connection, table, replay, values, io) : await showMessage(opened.connection, table, id!, io);
  } finally {
    await opened.close();
  }
}

function filterOf(values: Parsed): MessageFilter {
  const time = (option: 'from' | 'to') => {
    const value = values[option];
    if (value === undefined) return undefined;
    const date = readInstant(value);
    if (!date) throw new CliError(badTime(option, value));
    return date;
  };
  return {
    type: values.type,
    aggregateType: values['aggregate-type'],
    aggregateId: values['aggregate-id'],
    destination: values.destination,
    from: time('from'),
    to: time('to'),
  };
}

function count(values: Parsed, option: 'max-dead' | 'limit'): number | undefined {
  const value = values[option];
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new CliError(badNumber(option, value));
  // A page bigger than this is a typo, and past 2^63 the database refuses the number outright.
  if (option === 'limit' && Number(value) > MAX_LIMIT) throw new CliError(badLimit(value, MAX_LIMIT));
  return Number(value);
}

// `--after`: a position of the table (a signed 64-bit bigint), as `dead list` prints them.
function position(value: string | undefined): string {
  if (value === undefined) return '0';
  if (!/^\d{1,19}$/.test(value) || BigInt(value) > MAX_POSITION) throw new CliError(badPosition(value));
  return value;
}

function seconds(values: Parsed, option: 'max-lag'): number | undefined {
  const value = values[option];
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new CliError(badNumber(option, value));
  return Number(value) * 1_000;
}
