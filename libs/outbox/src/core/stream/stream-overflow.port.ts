import type { StreamMessage } from './stream-message';

/**
 * An aggregate as the stream keeps order for it. The type is prefixed with its length, so no two
 * pairs share a key whatever characters they hold; built several times per message on the stream's
 * one thread, where this costs an eighth of the JSON text of an array.
 */
export function aggregateOf(message: Pick<StreamMessage, 'aggregateType' | 'aggregateId'>): string {
  return `${message.aggregateType.length}:${message.aggregateType}${message.aggregateId}`;
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
  backlogged(aggregates: ReadonlyArray<Pick<StreamMessage, 'aggregateType' | 'aggregateId'>>, context?: TableReadContext): Promise<TableBacklog>;
  /**
   * Every aggregate (`aggregateOf`) that has unpublished rows, up to `limit` of them: `complete`
   * false when there are more (the set then holds `limit` of them and is not to be relied on).
   */
  held(limit: number, context?: TableReadContext): Promise<TableHeld>;
  /** The destinations an operator has paused now (`<table>_paused`). */
  pausedDestinations(): Promise<string[]>;
  /**
   * Read when a stream connects: up to which commit position it replays what an earlier stream may
   * have handed on to the table, `undefined` when nothing can have been (the table holds no row a
   * stream could have moved). `handedOn` answers for the messages committed up to it.
   */
  replayWindow(): Promise<bigint | undefined>;
  /**
   * Of these messages, replayed from commits an earlier stream may have read, the ids of those it
   * handed on before it stopped: moved to the table (a row of the message's id, or its own row let
   * go), or, for a row the stream owns, published and deleted. They are not to be published again.
   */
  handedOn(messages: ReadonlyArray<StreamMessage>): Promise<Set<string>>;
}

/**
 * What the stream knows of the commits that wrote the table, for a read of it. The read reports, in
 * the same snapshot as its answer, whether that snapshot sees every commit of `mustSee`: PostgreSQL
 * sends a commit to the stream a moment before it is visible to other transactions, and a read that
 * does not see it yet would miss the rows it wrote.
 */
export interface TableReadContext {
  /** Transaction ids (as decoded from the stream, 32 bits) of table-writing commits not yet seen by a read. */
  mustSee: readonly number[];
  /**
   * Commits the stream decoded that only inserted rows: transaction id → commit position. A row
   * whose inserting transaction (`xmin`) is one of these holds only the messages committed at or
   * after that position (`heldFrom`); any other row holds every message of its aggregate.
   */
  inserts: ReadonlyMap<number, bigint>;
}

/** Where the rows of held aggregates sit in commit order, and whether the read saw every commit it had to. */
export interface TableReadAnswer {
  /**
   * Of the held aggregates, those whose rows were all inserted by commits of `inserts`: the earliest
   * of those commit positions. Absent: the aggregate holds every message.
   */
  heldFrom?: Map<string, bigint>;
  /** False: the read's snapshot does not see every commit of `mustSee` yet; read again. Absent: true. */
  visible?: boolean;
}

export interface TableHeld extends TableReadAnswer {
  aggregates: Set<string>;
  complete: boolean;
}

export interface TableBacklog extends TableReadAnswer {
  /** The asked aggregates (`aggregateOf`) that have unpublished rows. */
  aggregates: Set<string>;
  /** False when no aggregate has one: the stream may stop asking until a row is written again. */
  any: boolean;
}
