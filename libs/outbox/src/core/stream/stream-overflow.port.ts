import type { StreamMessage } from './stream-message';

/** An aggregate as the stream keeps order for it. */
export function aggregateOf(message: Pick<StreamMessage, 'aggregateType' | 'aggregateId'>): string {
  return JSON.stringify([message.aggregateType, message.aggregateId]);
}

/**
 * Where the stream puts what it cannot publish now, so that one failing aggregate never holds the
 * others: the outbox table, whose relay retries the rows in order (retrying → dead) as for any row.
 */
export interface StreamOverflow {
  /**
   * Stores the messages durably, in this order, as rows due after `retryInMs`, with the failure
   * that sent them (`attempts` already made, `error` the last one's text; 0 and a note for those
   * that only follow a failed one). Resolves once committed.
   */
  divert(messages: ReadonlyArray<{ message: StreamMessage; attempts: number; error: string }>, retryInMs: number): Promise<void>;
  /**
   * Of these aggregates (`aggregateOf`), those that still have unpublished rows in the table, and
   * whether the table holds such a row of any aggregate at all (read in the same snapshot).
   */
  backlogged(aggregates: ReadonlyArray<Pick<StreamMessage, 'aggregateType' | 'aggregateId'>>): Promise<TableBacklog>;
  /**
   * Every aggregate (`aggregateOf`) that has unpublished rows, up to `limit` of them: `complete`
   * false when there are more (the set then holds `limit` of them and is not to be relied on).
   */
  held(limit: number): Promise<{ aggregates: Set<string>; complete: boolean }>;
}

export interface TableBacklog {
  /** The asked aggregates (`aggregateOf`) that have unpublished rows. */
  aggregates: Set<string>;
  /** False when no aggregate has one: the stream may stop asking until a row is written again. */
  any: boolean;
}
