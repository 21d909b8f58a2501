import { DEFAULT_INBOX_TABLE } from '../sql/inbox/inbox-sql.dialect';
import { DEFAULT_POISON_TABLE } from '../sql/poison/poison-sql.dialect';

/** Texts of the `nest-outbox poison` commands. */

export const poisonNeedsSubcommand = () => `"poison" needs list, show, replay or delete.`;

export const poisonNeedsRecord = (sub: string) => `"poison ${sub}" needs a consumer and a record key (see "poison list").`;

export const badPoisonName = (label: string, value: string) =>
  `The ${label} must be 1 to 255 characters without control characters; got ${JSON.stringify(value.slice(0, 80))}.`;

export const badPoisonState = (states: readonly string[], got: string) => `--state must be one of ${states.join(', ')}; got ${JSON.stringify(got)}.`;

export const badPoisonLimit = (got: string) => `--limit must be a number from 1 to 9999; got "${got}".`;

export const badPoisonTable = (option: string, got: string) => `--${option} must be a plain table name (letters, digits and _); got ${JSON.stringify(got)}.`;

export const noRecord = (consumer: string, key: string) => `No poison record for consumer "${consumer}" and key "${key}".`;

export const replayRequested = (consumer: string, key: string) =>
  `Replay of ${consumer} / ${key} requested: the app running "${consumer}" replays it within its replayPollMs; "poison show" tells the outcome.`;

export const cannotRequestReplay = (consumer: string, key: string, why: string) =>
  `The record ${consumer} / ${key} cannot be replayed: ${why}. Delete it with "poison delete".`;

export const recordDeleted = (consumer: string, key: string) => `Poison record ${consumer} / ${key} deleted; its message will not be handled.`;

/** The poison commands' part of the usage text. */
export const POISON_USAGE = `  poison list                 inbox poison records, newest failure first (--consumer <name>,
                              --state <failing|set-aside|replay-requested>, --limit <n>, --json)
  poison show <consumer> <key>    one record, with the stored message, as JSON
  poison replay <consumer> <key>  ask the app that runs the consumer's handler to replay it (it
                              looks every replayPollMs, 5 s by default; "poison show" tells the outcome)
  poison delete <consumer> <key>  drop the record and its message for good
      --poison-table <name>   (default: ${DEFAULT_POISON_TABLE}), --inbox-table <name> (default: ${DEFAULT_INBOX_TABLE})`;
