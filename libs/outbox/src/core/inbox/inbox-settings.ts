import { nameProblem, nameRule } from '../names';
import { OutboxConfigurationError } from '../outbox.errors';
import { INBOX_DEFAULTS, type InboxSettings } from './inbox.port';
import { invalidConsumerName, invalidInboxOption, unknownInboxOption } from './inbox.messages';
import { closest } from '../option-keys';
import { resolvePoisonSettings, type ResolvedPoisonSettings } from '../poison/poison-settings';

/** Keys `OutboxInboxModule` accepts: a misspelled one would otherwise leave its default in place in silence. */
export const INBOX_OPTION_KEYS = ['retentionMs', 'pruneIntervalMs', 'pruneBatchSize', 'runTransaction', 'poison', 'replayPollMs', 'metrics', 'claimCheck'] as const;

/**
 * Upper bounds. `pruneIntervalMs` is a timer, and Node.js fires a timer longer than 2^31 − 1 ms
 * after 1 ms instead; a day is already far more than pruning needs.
 */
export const INBOX_LIMITS = {
  retentionMs: 3_650 * 86_400_000,
  pruneIntervalMs: 86_400_000,
  pruneBatchSize: 100_000,
  replayPollMs: 86_400_000,
} as const;

export type ResolvedInboxSettings<O extends InboxSettings = InboxSettings> = Required<Omit<InboxSettings, 'poison'>> & { poison: ResolvedPoisonSettings | false } & Omit<O, keyof InboxSettings>;

/** Applies the defaults once and rejects values that cannot work, naming the option. */
export function resolveInboxSettings<O extends InboxSettings>(options: O): ResolvedInboxSettings<O> {
  for (const key of Object.keys(options ?? {})) {
    if (!(INBOX_OPTION_KEYS as readonly string[]).includes(key)) {
      throw new OutboxConfigurationError(unknownInboxOption(key, closest(key, INBOX_OPTION_KEYS), INBOX_OPTION_KEYS));
    }
  }
  const resolved = {
    ...options,
    retentionMs: options.retentionMs ?? INBOX_DEFAULTS.retentionMs,
    pruneIntervalMs: options.pruneIntervalMs ?? INBOX_DEFAULTS.pruneIntervalMs,
    pruneBatchSize: options.pruneBatchSize ?? INBOX_DEFAULTS.pruneBatchSize,
    replayPollMs: options.replayPollMs ?? INBOX_DEFAULTS.replayPollMs,
    poison: resolvePoisonSettings(options.poison),
  };
  const check = (option: keyof typeof INBOX_LIMITS, min: number) => {
    const value = resolved[option];
    if (!Number.isSafeInteger(value) || value < min || value > INBOX_LIMITS[option]) {
      throw new OutboxConfigurationError(invalidInboxOption(option, `an integer from ${min} to ${INBOX_LIMITS[option]}`, value));
    }
  };
  check('retentionMs', 1);
  check('pruneIntervalMs', 0);
  check('pruneBatchSize', 1);
  check('replayPollMs', 0);
  const runner = (options as { runTransaction?: unknown }).runTransaction;
  if (runner !== undefined && typeof runner !== 'function') throw new OutboxConfigurationError(invalidInboxOption('runTransaction', 'a function (work) => Promise', runner));
  return resolved;
}

const MAX_NAME = 255;

/** Checked before any statement: a NUL reached PostgreSQL as a raw QueryFailedError, a 256th character MariaDB's varchar(255). */
export function checkConsumerName(consumer: unknown): string {
  const problem = nameProblem(consumer, MAX_NAME);
  if (problem) throw new OutboxConfigurationError(invalidConsumerName(consumer, problem, nameRule(MAX_NAME)));
  return consumer as string;
}

/** An outbox envelope as a handler receives it: enough to find the message id. */
export function looksLikeEnvelope(value: unknown): value is { id: string; type: string } {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string' && typeof (value as { type?: unknown }).type === 'string';
}
