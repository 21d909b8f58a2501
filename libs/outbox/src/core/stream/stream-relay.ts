import { BatchPublisher } from '../batch-publisher';
import { toOutgoingMessage } from '../envelope';
import { errorText } from '../error-text';
import type { RetryIf } from '../failure-classification';
import type { ClaimedMessage, OutgoingMessage } from '../outbox-message';
import type { OutboxTransport } from '../outbox-transport.port';
import type { MessageOutcome, RelayObserver } from '../observe/relay-observer';
import { NOT_SENT, type SendResult } from '../batch-runs';
import type { RetryPolicy } from '../retry-policy';
import { AcknowledgedPositions } from './acknowledged-positions';
import { HeldAggregates } from './held-aggregates';
import { aggregateOf, type StreamOverflow } from './stream-overflow.port';
import { heldBehindDiverted, heldByPause } from './stream.messages';
import { PausedDestinations } from './paused-destinations';
import type { StreamCommit, StreamMessage } from './stream-message';
import { formatLsn } from './stream-message';
import { asClaimed } from './stream-claim';

export interface StreamRelayConfig {
  transports: ReadonlyMap<string, OutboxTransport>;
  /** Messages handed to the transports per batch. */
  batchSize: number;
  /** Messages decoded and held ahead of the batch in flight; `accept` waits while this many wait. */
  maxBuffered: number;
  publishTimeoutMs: number;
  /**
   * Backoff between attempts of a batch's failed messages. The stream never gives a message up:
   * give it a policy without an attempt limit (`new RetryPolicy(Number.MAX_SAFE_INTEGER, backoff)`).
   */
  retryPolicy: RetryPolicy;
  retryIf?: RetryIf;
  observer: RelayObserver;
  /** Who publishes, as observers are told (`relayId`). */
  relayId: string;
  logger: { warn(message: string): void };
  /**
   * Where messages go after `divertAfterAttempts` failed attempts (or a failure that is final), with
   * their aggregate's later ones, so that the stream moves on. Without it, the stream waits.
   */
  overflow?: StreamOverflow;
  divertAfterAttempts?: number;
  /**
   * Tells the server that everything up to this commit is published: the slot may drop the WAL
   * before it. `carriedMessages`: some of the commits confirmed now held outbox messages (a position
   * worth saving durably); false when only commits without any (other tables, keepalives) moved it.
   */
  confirm(lsn: bigint, carriedMessages: boolean): Promise<void> | void;
  /** The broker acknowledged these messages (before their position is confirmed): what stats count. */
  published?(messages: readonly StreamMessage[]): void;
  /**
   * Called when reading or writing the outbox table (`overflow`) fails; the relay tries again until
   * stopped. An owner that holds a replication connection stops the relay and ends the stream here:
   * a PostgreSQL server shutting down refuses the table's queries while it waits for its WAL sender,
   * and the WAL sender waits for this relay's confirmation, which a relay retrying with the
   * connection open never gives (the stream reconnects and replays from the last confirmation).
   */
  onTableFailure?(error: unknown): void;
}

/**
 * Publishes committed messages in commit order, a batch at a time, while the reader keeps decoding
 * the next ones (up to `maxBuffered`), and confirms the stream only up to the last commit whose
 * messages are all acknowledged. A message that fails is tried again with backoff, and the
 * messages behind it wait: nothing is skipped, so per-aggregate order holds and nothing is lost.
 */
export class StreamRelay {
  private readonly buffer: StreamMessage[] = [];
  private readonly positions = new AcknowledgedPositions();
  private readonly publisher: BatchPublisher;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly waiting = new Set<() => void>();
  private published = 0;
  private divertedCount = 0;
  // The aggregates the table holds, which the stream's messages must wait behind. Unknown at start
  // (rows pending from the table mode, a previous run's overflow, dead rows under 'hold'): read.
  private readonly held: HeldAggregates | undefined;
  // Destinations an operator paused: their messages go to the table, where the table relay holds them.
  private readonly paused: PausedDestinations | undefined;

  constructor(private readonly config: StreamRelayConfig) {
    this.publisher = new BatchPublisher(config.transports, config.observer, config.publishTimeoutMs, config.retryIf);
    this.held = config.overflow && new HeldAggregates(config.overflow);
    this.paused = config.overflow && new PausedDestinations(() => config.overflow!.pausedDestinations());
  }

  /** Messages acknowledged by the broker since this relay started. */
  get publishedCount(): number {
    return this.published;
  }

  /** Messages moved to the table since this relay started. */
  get divertedMessages(): number {
    return this.divertedCount;
  }

  /** The last position confirmed to the server by this relay, if any. */
  get confirmed(): bigint | undefined {
    return this.positions.confirmed;
  }

  /**
   * Takes one commit, in stream order; resolves once there is room for more, which holds the
   * reader back (and the server with it) while the broker is slower than the WAL.
   */
  async accept(commit: StreamCommit): Promise<void> {
    if (this.stopped) return;
    this.positions.received(commit);
    // The table's pauses read before the first commit is judged, and again while something is paused.
    // A failed read ends the stream (the reader's onEnd), which reads again from the last confirmation.
    await this.paused?.refresh();
    this.paused?.accept(commit);
    // Set before the commit's messages (and any later ones) are checked: a row it wrote precedes them.
    if (commit.wroteTable) {
      this.held?.tableWritten(commit);
      await this.held?.seeDecodedCommits();
    }
    this.buffer.push(...commit.messages);
    if (commit.messages.length === 0) await this.confirmAdvance();
    this.kick();
    while (!this.stopped && this.buffer.length >= this.config.maxBuffered) await new Promise<void>((resume) => this.waiting.add(resume));
  }

  /**
   * The server has sent everything up to `lsn`. With nothing received still unpublished, that
   * position can be confirmed, so that a slot without outbox traffic does not hold WAL forever.
   * Resolves false when something is still unpublished (the caller tries again later).
   */
  async caughtUp(lsn: bigint): Promise<boolean> {
    if (this.stopped || this.running || this.buffer.length > 0 || !this.positions.settled) return false;
    if (this.positions.confirmed !== undefined && lsn <= this.positions.confirmed) return true;
    this.positions.received({ lsn, messages: [] });
    await this.confirmAdvance();
    return true;
  }

  /** Stops taking batches; waits for the one in flight (it is confirmed if it was acknowledged). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeReader();
    this.wakeRetry?.();
    await this.running;
  }

  private kick(): void {
    if (this.running || this.buffer.length === 0) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      // A commit accepted between the loop's last check and here found `running` still set.
      if (!this.stopped) this.kick();
    });
  }

  private async drain(): Promise<void> {
    // Starts with an await, so that `running` is set before the loop can end.
    await Promise.resolve();
    while (!this.stopped && this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.config.batchSize);
      this.wakeReader();
      const held = await this.heldBehindTable(batch);
      if (held === undefined) return;
      const paused = this.paused ? batch.filter((message) => this.paused!.holds(message)) : [];
      const direct = held.length === 0 && paused.length === 0 ? batch : batch.filter((message) => !held.includes(message) && !paused.includes(message));
      // Published before the held ones reach the table: an aggregate's messages committed before a
      // row that holds the later ones (see HeldAggregates) must not be overtaken by those.
      if (!(await this.publishUntilAcknowledged(direct))) return;
      const diverted = batch
        .filter((message) => held.includes(message) || paused.includes(message))
        .map((message) => ({ message, attempts: 0, error: paused.includes(message) ? heldByPause(message.destination) : heldBehindDiverted() }));
      if (diverted.length > 0 && !(await this.divert(diverted))) return;
      this.positions.acknowledged(batch);
      await this.confirmAdvance();
    }
  }

  private async confirmAdvance(): Promise<void> {
    const lsn = this.positions.advance();
    if (lsn === undefined) return;
    try {
      await this.config.confirm(lsn, this.positions.lastAdvanceCarriedMessages);
    } catch (error) {
      // A lost confirmation only means a longer replay after a restart; the next one covers it.
      this.config.logger.warn(`Outbox WAL relay: confirming ${formatLsn(lsn)} failed: ${errorText(error)}`);
    }
  }

  private wakeRetry: (() => void) | undefined;

  /** True once every message of the batch is acknowledged; false if the relay was stopped first. */
  private async publishUntilAcknowledged(batch: StreamMessage[]): Promise<boolean> {
    let pending = batch;
    for (let attempt = 1; ; attempt++) {
      const claimed = pending.map((message) => asClaimed(message, attempt));
      const outgoing = new Map<string, OutgoingMessage>(claimed.map((message) => [message.position, toOutgoingMessage(message)]));
      const { results, durations } = await this.publisher.publishAll(claimed, outgoing, []);
      this.reportOutcomes(claimed, results, durations, attempt);
      const failed = pending.filter((_, index) => results[index] !== undefined);
      this.published += pending.length - failed.length;
      this.config.published?.(failed.length === 0 ? pending : pending.filter((_, index) => results[index] === undefined));
      if (failed.length === 0) return true;
      const first = results.find((result) => typeof result === 'object');
      const final = results.every((result) => result === undefined || typeof result !== 'object' || result.final);
      if (this.config.overflow && (final || attempt >= (this.config.divertAfterAttempts ?? 1))) {
        const outcome = (index: number) => results[pending.indexOf(failed[index])];
        const diverted = failed.map((message, index) => {
          const result = outcome(index);
          return { message, attempts: typeof result === 'object' ? attempt : 0, error: typeof result === 'object' ? result.text : heldBehindDiverted() };
        });
        return this.divert(diverted);
      }
      const delay = this.config.retryPolicy.delayAfter(attempt) ?? this.config.retryPolicy.delayAfter(1) ?? 0;
      this.config.logger.warn(
        `Outbox WAL relay: ${failed.length} of ${pending.length} messages not acknowledged (attempt ${attempt}${first ? `: ${first.text}` : ''}); ` +
          `the stream waits and tries them again in ${delay} ms.`,
      );
      pending = failed;
      if (this.stopped) return false;
      await this.pause(delay);
      if (this.stopped) return false;
    }
  }

  /**
   * Tells the observers (metrics) each attempted message's outcome, as the table relay does once it
   * recorded a batch's: streamed traffic counts in the same series. A failed message is never dead
   * here (the stream tries it again, or moves it to the table): its retry delay is reported.
   */
  private reportOutcomes(claimed: ClaimedMessage[], results: SendResult[], durations: number[], attempt: number): void {
    const retryInMs = this.config.retryPolicy.delayAfter(attempt) ?? 0;
    const outcomes: MessageOutcome[] = [];
    claimed.forEach((message, index) => {
      const result = results[index];
      if (result === NOT_SENT) return;
      outcomes.push(result === undefined ? { message, durationMs: durations[index] } : { message, error: result.text, retryInMs, durationMs: durations[index] });
    });
    if (outcomes.length > 0) this.config.observer.settled?.({ relayId: this.config.relayId, outcomes, leaseLost: { published: 0, failed: 0 } });
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
  private async heldBehindTable(batch: StreamMessage[]): Promise<StreamMessage[] | undefined> {
    const held = this.held;
    if (!held || batch.length === 0) return [];
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        held.checkedUpTo(batch[0].commit);
        const backlogged = await held.heldOf(batch);
        // A message committed before every row of its aggregate is not held by them (0: held from the start).
        return backlogged.size === 0 ? [] : batch.filter((message) => (backlogged.get(aggregateOf(message)) ?? message.commit + 1n) <= message.commit);
      } catch (error) {
        this.config.logger.warn(`Outbox WAL relay: reading the table's backlog failed (${errorText(error)}); trying again.`);
        this.config.onTableFailure?.(error);
        if (this.stopped) break;
        await this.pause(this.config.retryPolicy.delayAfter(attempt) ?? 0);
      }
    }
    return undefined;
  }

  /** Moves messages to the table (tried until it works, or the relay stops); true once committed. */
  private async divert(messages: Array<{ message: StreamMessage; attempts: number; error: string }>): Promise<boolean> {
    const overflow = this.config.overflow!;
    // Held from now on: a try that committed and then failed (the connection lost) still wrote them.
    this.held?.diverted(messages.map(({ message }) => message));
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await overflow.divert(messages, this.config.retryPolicy.delayAfter(Math.max(1, ...messages.map((m) => m.attempts))) ?? 0);
        this.divertedCount += messages.length;
        return true;
      } catch (error) {
        this.config.logger.warn(`Outbox WAL relay: moving ${messages.length} messages to the table failed (${errorText(error)}); trying again.`);
        this.config.onTableFailure?.(error);
        if (this.stopped) break;
        await this.pause(this.config.retryPolicy.delayAfter(attempt) ?? 0);
      }
    }
    return false;
  }

  private async pause(delayMs: number): Promise<void> {
    await new Promise<void>((resume) => {
      const timer = setTimeout(resume, delayMs);
      this.wakeRetry = () => {
        clearTimeout(timer);
        resume();
      };
    });
    this.wakeRetry = undefined;
  }

  private wakeReader(): void {
    for (const resume of this.waiting) resume();
    this.waiting.clear();
  }
}
