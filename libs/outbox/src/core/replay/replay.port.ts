import type { MessageFilter } from '../console/outbox-console.port';

/** Which published messages to replay: every field narrows (`from`/`to` bound the row's insert time). */
export type ReplayFilter = Pick<MessageFilter, 'type' | 'aggregateType' | 'aggregateId' | 'destination' | 'id' | 'from' | 'to'>;

/** Headers a replayed message carries (on top of its own), so that a consumer can tell a replay. */
export const REPLAY_HEADERS = {
  /** When the replay was asked for (ISO-8601 UTC); the same for every message of one replay. */
  replayedAt: 'outbox-replayed-at',
  /** Why, as the operator gave it. */
  reason: 'outbox-replay-reason',
  /** Who asked: the CLI's user (`--by`, default the OS user) or `console`. */
  by: 'outbox-replayed-by',
  /** One id per replay (a UUID): the messages replayed together. */
  replayId: 'outbox-replay-id',
} as const;

/**
 * How the store holds the rows of a replay while it selects them: as a lease of the replay's own
 * (owner `replay:<replayId>`, for `holdMs` by the database's clock). A held row is pending but not claimable, and, as the
 * first unpublished row of its aggregate, holds that aggregate's later rows back: nothing of an
 * aggregate goes out until all its replayed rows are in place. A hold outlives a crash of the replay
 * by `holdMs` at the latest (the lease then expires and the relay takes the rows as any).
 */
export interface ReplayHold {
  owner: string;
  replayId: string;
  /** Milliseconds the hold lasts at most, from the moment a row is taken, by the database's clock. */
  holdMs: number;
  /** The replay headers, merged into each row's stored headers. */
  headers: Record<string, string>;
}

/** What a replay needs of the store. Batches walk forward by position, `limit` rows at most each. */
export interface ReplayStore {
  /** Published rows matching the filter. */
  countPublished(filter: ReplayFilter): Promise<number>;
  /**
   * Published rows matching the filter past `after` → pending, attempts 0, published and dead times
   * cleared, the hold's lease and headers set; returns their positions.
   */
  holdBatch(filter: ReplayFilter, hold: ReplayHold, after: string, limit: number): Promise<string[]>;
  /**
   * Rows of this hold past `after` whose aggregate and destination have no row in flight (leased by a
   * relay) → lease cleared, so the relay claims them in position order; returns their positions.
   */
  releaseBatch(owner: string, after: string, limit: number): Promise<string[]>;
  /** Rows still held by this hold. */
  countHeld(owner: string): Promise<number>;
  /** The status of the message with this id; `undefined` when there is none. */
  statusOf(id: string): Promise<string | undefined>;
  /** Whether the WAL delivery mode streamed messages from this table (they have no rows to replay). */
  streamedMessagesExist(): Promise<boolean>;
}
