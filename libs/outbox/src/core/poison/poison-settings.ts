import { OutboxConfigurationError } from '../outbox.errors';
import { POISON_DEFAULTS, POISON_LIMITS, type PoisonSettings } from './poison.port';
import { invalidPoisonOption, unknownPoisonOption } from './poison.messages';

export type ResolvedPoisonSettings = Required<PoisonSettings>;

/** Applies the defaults once; `false` turns the policy off (a failing message is retried by the broker for ever). */
export function resolvePoisonSettings(options: PoisonSettings | false | undefined): ResolvedPoisonSettings | false {
  if (options === false) return false;
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new OutboxConfigurationError(invalidPoisonOption('', 'an object or false', options));
  }
  for (const key of Object.keys(options ?? {})) {
    if (!(key in POISON_DEFAULTS)) throw new OutboxConfigurationError(unknownPoisonOption(key));
  }
  const resolved = { maxAttempts: options?.maxAttempts ?? POISON_DEFAULTS.maxAttempts, maxStoredChars: options?.maxStoredChars ?? POISON_DEFAULTS.maxStoredChars };
  for (const option of ['maxAttempts', 'maxStoredChars'] as const) {
    const value = resolved[option];
    if (!Number.isSafeInteger(value) || value < 1 || value > POISON_LIMITS[option]) {
      throw new OutboxConfigurationError(invalidPoisonOption(option, `an integer from 1 to ${POISON_LIMITS[option]}`, value));
    }
  }
  return resolved;
}
