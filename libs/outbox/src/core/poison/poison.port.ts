/**
 * Poison messages on the consumer side: a delivery that cannot be decoded, or whose handler keeps
 * failing, is recorded and then acknowledged, so the rest of its partition or queue moves on.
 */

/**
 * `failing`: failed fewer than `maxAttempts` times and is retried by the broker; `set-aside`:
 * recorded and acknowledged; `replay-requested`: set aside, and an operator asked (from the CLI)
 * that the app running its handler replays it.
 */
export type PoisonState = 'failing' | 'set-aside' | 'replay-requested';
export const POISON_STATES: readonly PoisonState[] = ['failing', 'set-aside', 'replay-requested'];

/** One failed delivery, as the policy reports it to the store. */
export interface PoisonFailure {
  consumer: string;
  /** The message id when the delivery had a valid one, else `raw:` + a hash of the stored message. */
  key: string;
  messageId?: string;
  /** The message as JSON text, cut to `maxStoredChars`. */
  raw: string;
  truncated: boolean;
  reason: string;
}

/** A row of the poison table. Times are ISO-8601 UTC. */
export interface PoisonRecord {
  consumer: string;
  key: string;
  messageId: string | null;
  raw: string;
  truncated: boolean;
  reason: string;
  attempts: number;
  state: PoisonState;
  firstFailedAt: string;
  lastFailedAt: string;
}

export interface PoisonListFilter {
  consumer?: string;
  state?: PoisonState;
  /** At most this many, newest failure first. */
  limit: number;
}

/** The records of one consumer in one state. */
export interface PoisonCount {
  consumer: string;
  state: PoisonState;
  count: number;
  /** The first failure of the oldest of them, ISO-8601 UTC. */
  oldestFailedAt: string;
}

/** Where poison records live; `T` is the handler's transaction. */
export interface PoisonStore<T> {
  /**
   * Counts one failed attempt, outside any handler transaction (it must survive the rollback).
   * The record is set aside once its attempts reach `setAsideAt`; a set-aside record with a message
   * id also gets the inbox mark, so a redelivery is acknowledged as a duplicate.
   */
  countFailure(failure: PoisonFailure, setAsideAt: number): Promise<PoisonRecord>;
  /**
   * Deletes a record inside a replay's transaction, first: a concurrent replay of the same record
   * waits on its row and then finds it gone. Resolves whether this call deleted it.
   */
  claim(transaction: T, consumer: string, key: string): Promise<boolean>;
  /**
   * Deletes the `failing` records of messages handled since (they have their inbox mark); reads
   * already leave those out. Resolves with how many went.
   */
  sweep(): Promise<number>;
  /** Removes the inbox mark a set-aside wrote, inside the replay's transaction. */
  unmark(transaction: T, consumer: string, messageId: string): Promise<void>;
  get(consumer: string, key: string): Promise<PoisonRecord | undefined>;
  list(filter: PoisonListFilter): Promise<PoisonRecord[]>;
  /** Deletes a record; resolves whether there was one. */
  remove(consumer: string, key: string): Promise<boolean>;
  /** Asks for a replay by the app that runs the handler; resolves false when there is no replayable record. */
  requestReplay(consumer: string, key: string): Promise<boolean>;
  /** Records per consumer and state, for metrics, status and health. */
  counts(): Promise<PoisonCount[]>;
}

/** Settings of the poison policy (`OutboxInboxModule` option `poison`). */
export interface PoisonSettings {
  /** Failed attempts of a handler before its message is set aside and acknowledged. Default `5`. */
  maxAttempts?: number;
  /** Characters of a message kept in its record; a longer one is cut and cannot be replayed. Default `65536`. */
  maxStoredChars?: number;
}

export const POISON_DEFAULTS = { maxAttempts: 5, maxStoredChars: 65_536 } as const;
export const POISON_LIMITS = { maxAttempts: 1_000, maxStoredChars: 16_777_215 } as const;
