import { OutboxConfigurationError } from '../outbox.errors';
import { invalidClaimCheckOption, notAClaimCheckOption, thresholdOverMaxPayload } from './claim-check.messages';

/** What the S3 store needs of an `S3Client` of `@aws-sdk/client-s3`: its `send`. */
export interface S3ClientLike {
  send(command: object): Promise<unknown>;
}

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
   * the caller's transaction, so a rollback leaves nothing behind. `'s3'`: an object in `bucket`
   * (optional package `@aws-sdk/client-s3`), written before the commit; a row in the payloads table,
   * written in the transaction, tells a committed object from an orphan, which cleanup removes after `orphanGraceMs`.
   */
  store?: 'database' | 's3';
  /** `store: 's3'`: the bucket. Required there. */
  bucket?: string;
  /** `store: 's3'`: prefix of the object keys (`<prefix><message id>`); cleanup lists only under it. Default `'outbox-payloads/'`. */
  prefix?: string;
  /** `store: 's3'`: the `S3Client` to use. Default: one made from `s3Config`. */
  s3Client?: S3ClientLike;
  /** `store: 's3'`: the `S3ClientConfig` (region, endpoint, credentials, forcePathStyle) of the client made when `s3Client` is not given. Default `{}` (the SDK's environment). */
  s3Config?: Record<string, unknown>;
  /**
   * `store: 's3'`: an object older than this without a committed row is an orphan (its transaction
   * rolled back, or the process died before the commit) and cleanup deletes it. Must exceed your
   * longest transaction. Default `3600000` (1 hour).
   */
  orphanGraceMs?: number;
}

export type ResolvedClaimCheck =
  | { store: 'database'; thresholdBytes: number; maxBytes: number }
  | { store: 's3'; thresholdBytes: number; maxBytes: number; bucket: string; prefix: string; s3Client?: S3ClientLike; s3Config: Record<string, unknown>; orphanGraceMs: number };

export const CLAIM_CHECK_DEFAULTS = { thresholdBytes: 262_144, maxBytes: 67_108_864, store: 'database', prefix: 'outbox-payloads/', orphanGraceMs: 3_600_000 } as const;

const S3_ONLY = ['bucket', 'prefix', 's3Client', 's3Config', 'orphanGraceMs'] as const;

/** `undefined` (the default) and `false` turn the claim check off; `true` takes every default. */
export function resolveClaimCheck(options: ClaimCheckOptions | boolean | undefined, maxPayloadBytes: number): ResolvedClaimCheck | undefined {
  if (options === undefined || options === false) return undefined;
  if (options !== true && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new OutboxConfigurationError(notAClaimCheckOption(options));
  }
  const given: ClaimCheckOptions = options === true ? {} : options;
  const thresholdBytes = given.thresholdBytes ?? CLAIM_CHECK_DEFAULTS.thresholdBytes;
  const maxBytes = given.maxBytes ?? CLAIM_CHECK_DEFAULTS.maxBytes;
  positive('thresholdBytes', thresholdBytes);
  positive('maxBytes', maxBytes);
  if (thresholdBytes > maxPayloadBytes) throw new OutboxConfigurationError(thresholdOverMaxPayload(thresholdBytes, maxPayloadBytes));
  if (maxBytes < thresholdBytes) throw new OutboxConfigurationError(invalidClaimCheckOption('maxBytes', `at least "claimCheck.thresholdBytes" (${thresholdBytes})`, maxBytes));
  const store = given.store ?? CLAIM_CHECK_DEFAULTS.store;
  if (store === 'database') {
    const misplaced = S3_ONLY.find((key) => given[key] !== undefined);
    if (misplaced) throw new OutboxConfigurationError(invalidClaimCheckOption(misplaced, `left out unless "claimCheck.store" is 's3'`, given[misplaced] instanceof Object ? '(an object)' : given[misplaced]));
    return { store, thresholdBytes, maxBytes };
  }
  if (store !== 's3') throw new OutboxConfigurationError(invalidClaimCheckOption('store', `'database' or 's3'`, store));
  // S3's rule: 3–63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit.
  if (typeof given.bucket !== 'string' || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(given.bucket)) {
    throw new OutboxConfigurationError(invalidClaimCheckOption('bucket', 'an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)', given.bucket));
  }
  const prefix = given.prefix ?? CLAIM_CHECK_DEFAULTS.prefix;
  if (typeof prefix !== 'string' || prefix.length > 200) throw new OutboxConfigurationError(invalidClaimCheckOption('prefix', 'a string of at most 200 characters', prefix));
  if (given.s3Client !== undefined && typeof given.s3Client?.send !== 'function') throw new OutboxConfigurationError(invalidClaimCheckOption('s3Client', 'an S3Client of @aws-sdk/client-s3', '(no send method)'));
  const s3Config = given.s3Config ?? {};
  if (typeof s3Config !== 'object' || s3Config === null) throw new OutboxConfigurationError(invalidClaimCheckOption('s3Config', 'an S3ClientConfig object', s3Config));
  const orphanGraceMs = given.orphanGraceMs ?? CLAIM_CHECK_DEFAULTS.orphanGraceMs;
  positive('orphanGraceMs', orphanGraceMs, 'a whole number of milliseconds, 1 or more');
  return { store, thresholdBytes, maxBytes, bucket: given.bucket, prefix, s3Client: given.s3Client, s3Config, orphanGraceMs };
}

function positive(key: string, value: unknown, expected = 'a whole number of bytes, 1 or more'): void {
  if (!Number.isSafeInteger(value) || (value as number) < 1) throw new OutboxConfigurationError(invalidClaimCheckOption(key, expected, value));
}
