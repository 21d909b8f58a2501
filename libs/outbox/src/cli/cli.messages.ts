/** Texts of the `nest-outbox` command. */

import { shownValue } from '../core/shown-value';
import { redactUrl } from './cli-redaction';
import { POISON_USAGE } from './cli-poison.messages';
import { REPLAY_USAGE } from './cli-replay.messages';
import { ASYNCAPI_USAGE } from './cli-asyncapi.messages';
import { SCHEMAS_USAGE } from './cli-schemas.messages';

export const USAGE = `Usage: nest-outbox <command> [options]

Commands:
  status                      counts, lag, dead rows and paused destinations, and the inbox's
                              poison records per consumer when the database has their table
                              (--poison-table, --inbox-table); exit 1 when a threshold is passed
      --max-lag <seconds>     oldest pending row older than this fails the check
      --max-dead <count>      more dead rows than this fails the check
      --json                  print the snapshot as JSON
  dead list                   dead messages, oldest first (--limit <n>, --after <position>)
  dead requeue <id>           make a dead message pending again
  dead requeue --<filter> ... every dead message matching the filter (--dry-run only counts)
  dead discard <id>           give a dead message up
  dead discard --<filter> ... the same, by filter
      filters: --type --aggregate-type --aggregate-id --destination --from <ISO> --to <ISO>
  retry-now <id>              a message waiting in backoff is due now (its attempts are kept)
  retry-now --<filter> ...    every message in backoff matching the filter (--dry-run only counts)
  pause <destination>         hold publishing to a destination, on every relay
      --reason <text>         why (shown by status, paused, the console and health)
      --confirm-unknown       pause a destination that no message has used yet
  resume <destination>        publish to it again
  paused                      list paused destinations, since when and why
${REPLAY_USAGE}
${POISON_USAGE}
  sql --dialect <postgres|sqlite|mariadb> [--table <name>] [--schema <name>]
                              print the DDL of the outbox tables (docs/migrations.md)
      --tables <list>         outbox, inbox, poison, comma-separated (default: outbox);
                              --inbox-table, --poison-table name them
      --format <form>         sql (default); prisma: a migration.sql for prisma/migrations/
                              (--out <prisma/migrations> writes <timestamp>_outbox/migration.sql);
                              drizzle: the body of a drizzle-kit custom migration
      --partition-by <day|hour>
                              PostgreSQL: the outbox table partitioned by created_at (give the module
                              partitioning: { interval } too; docs/operating.md)
  wal status [slot]           WAL delivery mode: WAL the slot retains, whether an instance streams it,
                              and (when none does) the outbox events in it not yet published
  wal drop-slot [slot]        drop the slot and its publication (and the WAL it holds); refused while
                              an instance streams it, or while it holds unpublished events (--force
                              drops them too) (default slot: outbox_<table>, outbox_<schema>_<table>)
${ASYNCAPI_USAGE}
      --outbox <name>         the outbox to describe, in an app that declares several ("default":
                              the one without a name)
      --out <file>            write the document there instead of stdout
      --yaml                  YAML instead of JSON (docs/asyncapi.md)
${SCHEMAS_USAGE}

Connection (every command but sql, asyncapi and schemas):
  --url <url>                 postgres://user:pass@host:5432/db, mysql://user:pass@host:3306/db
                              (MariaDB/MySQL) or sqlite:/path/to/file.sqlite
                              (default: $OUTBOX_DATABASE_URL)
  --schema <name>             PostgreSQL schema of the table, as the module's "schema" option:
                              every statement names "<schema>"."<table>" (default: none, the
                              connection's search_path decides)
  --table <name>              outbox table (default: outbox_messages)

Exit codes: 0 done, 1 a status threshold passed, 2 bad input, unknown message, or no database.`;

export const missingUrl = () => 'No database: pass --url postgres://… or sqlite:/path, or set OUTBOX_DATABASE_URL.';

export const badUrl = (url: string) =>
  `Cannot use "${redactUrl(url)}" as a database URL: expected postgres://user:pass@host:port/db, mysql://user:pass@host:port/db or sqlite:/path/to/file.sqlite.`;

export const noSqliteFile = (path: string) => `No SQLite database at "${path}": check the path (nest-outbox never creates one).`;

export const cannotConnect = (url: string, reason: string) => `Cannot connect to ${redactUrl(url)}: ${reason}`;

export const unknownCommand = (command: string) => `Unknown command "${command}". Run "nest-outbox --help" for the list.`;

export const needsArgument = (command: string, what: string) => `"${command}" needs ${what}.`;

export const badDialect = (dialect: string | undefined) =>
  dialect === undefined
    ? '`sql` needs --dialect: postgres, sqlite or mariadb (e.g. nest-outbox sql --dialect postgres).'
    : `--dialect must be postgres, sqlite or mariadb; got ${JSON.stringify(dialect)}.`;

export const badFormat = (format: string) => `--format must be sql, prisma or drizzle; got "${format}".`;

export const badTables = (tables: string) => `--tables must list outbox, inbox or poison, comma-separated; got "${tables}".`;

export const outNeedsPrisma = () => '--out writes a Prisma migration: pass it with --format prisma (the other forms print to stdout).';

export const migrationExists = (path: string) => `${path} exists already: an applied Prisma migration is never rewritten. Remove it first if it was never applied.`;

export const badNumber = (option: string, value: string) => `--${option} must be a non-negative number; got "${value}".`;

export const badTime = (option: string, value: string) => `--${option} must be an ISO-8601 time such as 2026-01-31T12:00:00Z (years 1 to 9999); got "${value}".`;

export const badDestination = (command: string, got: string, problem: string, rule: string) =>
  `The destination argument of "nest-outbox ${command}", ${shownValue(got)}, is refused: ${problem}. A destination is ${rule}.`;

export const badLimit = (value: string, max: number) => `--limit must be at most ${max}; got "${value}". Page on with --after <position>.`;

export const badPosition = (value: string) => `--after must be a position printed by "dead list" (a whole number up to 9223372036854775807); got "${value}".`;

export const badReason = () => '--reason must be at most 500 characters, without a NUL character.';

export const notAnId = (id: string) => `"${id}" is not a message id (a UUID, the envelope's "id").`;

export const walNeedsPostgresUrl = (sub: string) => `The WAL delivery mode exists on PostgreSQL only: "wal ${sub}" needs a postgres:// URL.`;

export const walSlotHoldsEvents = (slot: string, events: number) =>
  `The slot "${slot}" still holds ${events} outbox event(s) no relay has published: dropping it loses them. ` +
  `Start an instance in the WAL mode until "wal status" shows none, or pass --force to drop them anyway.`;

export const walSlotOfAnotherDatabase = (slot: string, database: string) =>
  `Slot "${slot}" belongs to the database "${database}", not this one: connect to that database to drop it.`;

export const badPartitionBy = (value: string) => `--partition-by must be day or hour; got ${JSON.stringify(value)}.`;

export const partitionByNeedsPostgres = (dialect: string) =>
  `--partition-by needs --dialect postgres (declarative partitions); ${dialect} has none. Leave it out there: cleanup deletes settled rows in batches.`;
