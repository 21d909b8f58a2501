import { errorText } from '../error-text';
import type { RetryPolicy } from '../retry-policy';
import type { HeldAggregates } from './held-aggregates';
import { aggregateOf, type StreamOverflow } from './stream-overflow.port';
import type { StreamMessage } from './stream-message';

interface TableSideConfig {
  overflow?: StreamOverflow;
  /** Commits at or before this position may have been read by an earlier stream (see StreamRelayConfig). */
  replayedUpTo?: bigint;
  retryPolicy: RetryPolicy;
  logger: { warn(message: string): void };
  onTableFailure?(error: unknown): void;
}

/**
 * What the stream relay asks of and writes to the outbox table: which of a batch's messages wait
 * behind rows of their aggregate, and moving messages there. One at a time, in the order the
 * batches were taken: HeldAggregates remembers what the last check saw, and a check must not
 * interleave with another batch's move, or it could forget an aggregate the move just held.
 */
export class StreamTableSide {
  private queue: Promise<unknown> = Promise.resolve();
  /** Messages moved to the table since the relay started. */
  divertedCount = 0;

  constructor(
    private readonly config: TableSideConfig,
    private readonly held: HeldAggregates | undefined,
    private readonly control: { stopped(): boolean; pause(delayMs: number): Promise<void> },
  ) {}

  /** The batch's messages that must go to the table behind their aggregate's rows; `undefined` when the relay stopped. */
  heldBehind(batch: StreamMessage[]): Promise<StreamMessage[] | undefined> {
    return this.inTurn(() => this.heldBehindNow(batch));
  }

  /** Moves messages to the table (tried until it works, or the relay stops); true once committed. */
  divert(messages: Array<{ message: StreamMessage; attempts: number; error: string }>): Promise<boolean> {
    return this.inTurn(() => this.divertNow(messages));
  }

  /**
   * Of the batch's replayed messages (committed at or before `replayedUpTo`), those an earlier
   * stream handed on: the table relay's now, or published. Empty past the replay, without a query;
   * `undefined` when the relay stopped.
   */
  handedOn(batch: StreamMessage[]): Promise<Set<StreamMessage> | undefined> {
    const upTo = this.config.replayedUpTo;
    const replayed = upTo === undefined || !this.config.overflow ? [] : batch.filter((message) => message.commit <= upTo);
    if (replayed.length === 0) return Promise.resolve(new Set());
    return this.inTurn(() =>
      this.untilDone('reading what an earlier stream handed on', async () => {
        const ids = await this.config.overflow!.handedOn(replayed);
        return new Set(replayed.filter((message) => ids.has(message.id)));
      }),
    );
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(work);
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /**
   * The messages of aggregates that have unpublished rows in the table: they go there too, behind
   * them. An aggregate whose rows are all published streams directly again.
   *
   * The set of held aggregates is kept in memory (HeldAggregates): read at the start (rows pending
   * from the table mode, a previous run's overflow, dead rows under 'hold') and again after any
   * commit that wrote a row (`wroteTable`: a table-mode writer, a delayed message, a requeue, a
   * divert), which reaches the relay before the messages committed after it. The table is asked
   * then, and for a batch that carries an aggregate of the set (it may have drained). A row the
   * stream knows it decoded after a message's commit holds only what comes after that row.
   * `undefined`: stopped.
   */
  private async heldBehindNow(batch: StreamMessage[]): Promise<StreamMessage[] | undefined> {
    const held = this.held;
    if (!held || batch.length === 0) return [];
    return this.untilDone("reading the table's backlog", async () => {
      held.checkedUpTo(batch[0].commit);
      const backlogged = await held.heldOf(batch);
      // A message committed before every row of its aggregate is not held by them (0: held from the start).
      return backlogged.size === 0 ? [] : batch.filter((message) => (backlogged.get(aggregateOf(message)) ?? message.commit + 1n) <= message.commit);
    });
  }

  /** Moves messages to the table (tried until it works, or the relay stops); true once committed. */
  private async divertNow(messages: Array<{ message: StreamMessage; attempts: number; error: string }>): Promise<boolean> {
    const overflow = this.config.overflow!;
    // Held from now on: a try that committed and then failed (the connection lost) still wrote them.
    this.held?.diverted(messages.map(({ message }) => message));
    const moved = await this.untilDone(`moving ${messages.length} messages to the table`, async () => {
      await overflow.divert(messages, this.config.retryPolicy.delayAfter(Math.max(1, ...messages.map((m) => m.attempts))) ?? 0);
      this.divertedCount += messages.length;
      return true;
    });
    return moved ?? false;
  }

  /** Tries `work` until it works (with backoff), or the relay stops: `undefined` then. */
  private async untilDone<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 1; !this.control.stopped(); attempt++) {
      try {
        return await work();
      } catch (error) {
        this.config.logger.warn(`Outbox WAL relay: ${what} failed (${errorText(error)}); trying again.`);
        this.config.onTableFailure?.(error);
        if (this.control.stopped()) break;
        await this.control.pause(this.config.retryPolicy.delayAfter(attempt) ?? 0);
      }
    }
    return undefined;
  }
}
