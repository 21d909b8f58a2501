import { OutboxConfigurationError } from '../outbox.errors';
import { invalidClaimCheckOption, thresholdOverMaxPayload } from './claim-check.messages';

/** The `claimCheck` option of `OutboxModule`: payloads over a size are stored out of their message. */
export interface ClaimCheckOptions {
  /**
   * Payloads whose JSON is larger than this many bytes are stored out of the message, which carries a
   * reference instead. At most `maxPayloadBytes`. Default `262144` (256 KiB).
   */
  thresholdBytes?: number;
  /** Largest payload the claim check stores, in bytes; a larger one fails the save. Default `67108864` (64 MiB). */
  maxBytes?: number;
  /**
   * Where payloads go. `'database'` (the default): the `<outbox table>_payloads` table, written in
   * the caller's transaction, so a rollback leaves nothing behind.
   */
  store?: 'database';
}

export interface ResolvedClaimCheck {
  thresholdBytes: number;
  maxBytes: number;
  store: 'database';
}

export const CLAIM_CHECK_DEFAULTS = { thresholdBytes: 262_144, maxBytes: 67_108_864, store: 'database' } as const;

/** `undefined` (the default) and `false` turn the claim check off; `true` takes every default. */
export function resolveClaimCheck(options: ClaimCheckOptions | boolean | undefined, maxPayloadBytes: number): ResolvedClaimCheck | undefined {
  if (options === undefined || options === false) return undefined;
  if (options !== true && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new OutboxConfigurationError(`OutboxModule option "claimCheck" must be true, false or an object { thresholdBytes?, maxBytes?, store? }; got ${JSON.stringify(options)}.`);
  }
  const given = options === true ? {} : options;
  const resolved: ResolvedClaimCheck = { ...CLAIM_CHECK_DEFAULTS, ...given };
  positive('thresholdBytes', resolved.thresholdBytes);
  positive('maxBytes', resolved.maxBytes);
  if (resolved.store !== 'database') throw new OutboxConfigurationError(invalidClaimCheckOption('store', `'database'`, resolved.store));
  if (resolved.thresholdBytes > maxPayloadBytes) throw new OutboxConfigurationError(thresholdOverMaxPayload(resolved.thresholdBytes, maxPayloadBytes));
  if (resolved.maxBytes < resolved.thresholdBytes) throw new OutboxConfigurationError(invalidClaimCheckOption('maxBytes', `at least "claimCheck.thresholdBytes" (${resolved.thresholdBytes})`, resolved.maxBytes));
  return resolved;
}

function positive(key: string, value: unknown): void {
  if (!Number.isSafeInteger(value) || (value as number) < 1) throw new OutboxConfigurationError(invalidClaimCheckOption(key, 'a whole number of bytes, 1 or more', value));
}
