import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import { ConsoleError } from '../core/console/console.error';
import { OutboxConsole } from '../core/console/outbox-console';
import type { MessageFilter } from '../core/console/outbox-console.port';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidIdentifier } from '../core/outbox.messages';
import { isIdentifier } from '../core/outbox-options';
import { OutboxTable } from '../typeorm/dialects/outbox-table';
import { DEFAULT_OUTBOX_TABLE } from '../typeorm/outbox-message.entity';
import { createSqlOutboxConsoleStore, createSqlOutboxMaintenanceStore, tableDialectFor } from '../typeorm/outbox-sql.factory';
import { CliError } from './cli.error';
import { badDialect, badNumber, badTime, missingUrl, needsArgument, notAnId, unknownCommand, USAGE } from './cli.messages';
import { connect } from './cli-connection';
import { printStatus } from './cli-status';
import { runWalCommand } from './cli-wal-slot';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

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
  type: { type: 'string' },
  'aggregate-type': { type: 'string' },
  'aggregate-id': { type: 'string' },
  destination: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  dialect: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Parsed = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs one command; resolves to the exit code. Errors of input or connection are printed, never thrown. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
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
  const table = OutboxTable.of({ tableName: values.table ?? DEFAULT_OUTBOX_TABLE, schema: values.schema });
  if (command === 'sql') return printSql(values.dialect, table, io);
  if (command === 'wal') return runWalCommand(sub, argument, table, { url: values.url ?? io.env.OUTBOX_DATABASE_URL, force: values.force === true }, io);
  const known = ['status', 'dead', 'pause', 'resume', 'paused'];
  if (!known.includes(command)) throw new CliError(unknownCommand(command));
  if (command === 'dead' && !['list', 'requeue', 'discard'].includes(sub ?? '')) throw new CliError(needsArgument('dead', 'list, requeue or discard'));
  if ((command === 'pause' || command === 'resume') && !sub) throw new CliError(needsArgument(command, 'a destination'));
  const thresholds = { maxLagMs: seconds(values, 'max-lag'), maxDead: count(values, 'max-dead') };
  const filter = filterOf(values);
  if (command === 'dead' && sub !== 'list' && argument !== undefined && !UUID.test(argument)) throw new CliError(notAnId(argument));
  const url = values.url ?? io.env.OUTBOX_DATABASE_URL;
  if (!url) throw new CliError(missingUrl());
  const dataSource = await connect(url);
  try {
    return await runOn(dataSource, table, { command, sub, argument }, { values, thresholds, filter }, io);
  } finally {
    await dataSource.destroy();
  }
}

async function runOn(
  dataSource: DataSource,
  table: OutboxTable,
  { command, sub, argument }: { command: string; sub?: string; argument?: string },
  { values, thresholds, filter }: { values: Parsed; thresholds: { maxLagMs?: number; maxDead?: number }; filter: MessageFilter },
  io: CliIo,
): Promise<number> {
  if (command === 'status') return printStatus(dataSource, table, thresholds, values.json === true, io);
  const maintenance = createSqlOutboxMaintenanceStore(dataSource, table);
  const operator = new OutboxConsole(createSqlOutboxConsoleStore(dataSource, table), maintenance);
  switch (command) {
    case 'paused':
      for (const paused of await operator.paused()) io.out(`${paused.destination}\tpaused since ${paused.pausedAt}`);
      return 0;
    case 'pause':
      io.out((await operator.pause(sub!)) ? `Paused "${sub}": no relay publishes to it until it is resumed.` : `"${sub}" was already paused.`);
      return 0;
    case 'resume':
      io.out((await operator.resume(sub!)) ? `Resumed "${sub}".` : `"${sub}" was not paused.`);
      return 0;
  }
  if (sub === 'list') {
    const dead = await maintenance.listDead(values.after ?? '0', count(values, 'limit') ?? 100);
    if (values.json) io.out(JSON.stringify(dead, null, 2));
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

function printSql(dialect: string | undefined, table: OutboxTable, io: CliIo): number {
  const driver = { postgres: 'postgres', sqlite: 'better-sqlite3', mariadb: 'mariadb', mysql: 'mysql' }[dialect ?? ''];
  if (!driver) throw new CliError(badDialect(dialect));
  for (const statement of tableDialectFor(driver, table).createTable()) io.out(`${statement.replace(/\n {6}/g, '\n  ')};\n`);
  return 0;
}

function filterOf(values: Parsed): MessageFilter {
  const time = (option: 'from' | 'to') => {
    const value = values[option];
    if (value === undefined) return undefined;
    const date = new Date(value);
    if (!/^\d{4}-\d\d-\d\d/.test(value) || Number.isNaN(date.getTime())) throw new CliError(badTime(option, value));
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
  return Number(value);
}

function seconds(values: Parsed, option: 'max-lag'): number | undefined {
  const value = values[option];
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new CliError(badNumber(option, value));
  return Number(value) * 1_000;
}
