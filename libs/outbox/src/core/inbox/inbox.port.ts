import type { PoisonRecord, PoisonSettings } from '../poison/poison.port';

/**
 * What `process` did with one delivery: ran the work (`result`), skipped a duplicate, or set the
 * message aside under the poison policy (`setAside`). In every case the caller acknowledges it.
 */
export type InboxOutcome<R> = { duplicate: false; result: R; setAside?: undefined } | { duplicate: true; setAside?: undefined } | { duplicate: false; setAside: PoisonRecord; result?: undefined };

/**
 * Where a consumer's "seen" marks live. `mark` runs inside the transaction `T` that also runs the
 * handler's work, so the mark and the side effect commit, or roll back, together.
 */
export interface InboxStore<T> {
  /**
   * Records (consumer, message id) in `transaction`. Resolves `true` when this call recorded it,
   * `false` when it was already recorded by a committed transaction. A concurrent transaction
   * marking the same pair makes this call wait until that one ends.
   */
  mark(transaction: T, consumer: string, messageId: string): Promise<boolean>;
  /** Deletes up to `limit` marks older than `olderThanMs`; resolves with how many went. */
  prune(olderThanMs: number, limit: number): Promise<number>;
}

/** Settings of the inbox that do not depend on Nest or TypeORM. */
export interface InboxSettings {
  /** Marks are kept this long, then pruned. Must exceed how long a broker may redeliver. Default `1209600000` (14 days). */
  retentionMs?: number;
  /** Milliseconds between prune runs; `0` turns pruning off. Default `3600000` (1 hour). */
  pruneIntervalMs?: number;
  /** Marks deleted per statement. Default `1000`. */
  pruneBatchSize?: number;
  /**
   * The poison policy: a delivery that cannot be decoded, or whose handler has failed `maxAttempts`
   * times, is recorded in the poison table and acknowledged. Default `{ maxAttempts: 5, maxStoredChars: 65536 }`;
   * `false` turns it off (a failing message is then redelivered for ever, holding up its partition).
   */
  poison?: PoisonSettings | false;
  /** Milliseconds between looks for replays asked for from the CLI; `0` turns it off. Default `5000`. */
  replayPollMs?: number;
}

export const INBOX_DEFAULTS = { retentionMs: 1_209_600_000, pruneIntervalMs: 3_600_000, pruneBatchSize: 1_000, replayPollMs: 5_000 } as const;
