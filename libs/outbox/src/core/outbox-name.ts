import { OutboxConfigurationError } from './outbox.errors';
import { invalidOption } from './outbox.messages';

/**
 * An outbox's name (`OutboxModule.forRoot({ name })`), for apps that declare several: it goes into
 * injection tokens, metric labels and the default replication slot's name, which PostgreSQL takes
 * in lower case letters, digits and `_` only, hence the rule.
 */
export const OUTBOX_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/** What the `outbox` label, the console and the CLI call the outbox declared without a name. */
export const DEFAULT_OUTBOX_NAME = 'default';

export function validateOutboxName(name: unknown, option = 'name'): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || !OUTBOX_NAME.test(name)) {
    throw new OutboxConfigurationError(invalidOption(option, 'a lower case letter, then up to 31 lower case letters, digits or _ (e.g. "orders_eu")', name));
  }
  return name;
}

/**
 * The injection token under which the outbox named `name` offers what `label` names (a class name,
 * or a symbol's description). `Symbol.for`, so that two copies of the library, and the CLI, which
 * imports no Nest class, agree on it.
 */
export function namedOutboxToken(label: string, name: string): symbol {
  return Symbol.for(`nest-outbox:${name}:${label}`);
}

/**
 * What a log line of an outbox's relay or stream adds to say which outbox it is (` of outbox "eu"`),
 * so that the startup lines of an app with several tell them apart; nothing for the outbox declared
 * without a name, whose lines stay as an app with one outbox has them.
 */
export function ofOutbox(name: string | undefined): string {
  return name === undefined ? '' : ` of outbox "${name}"`;
}
