import { errorText } from '../error-text';
import { combineObservers } from '../observe/relay-observer';
import { OutboxChannelsObserver } from '../observe/outbox.channels';
import { AcknowledgedPositions } from './acknowledged-positions';
import { HeldAggregates } from './held-aggregates';
import { StreamBatchAttempts } from './stream-batch-attempts';
import type { StreamRelayConfig } from './stream-relay.config';
import { StreamTableSide } from './stream-table-side';
import { aggregateOf } from './stream-overflow.port';
import { heldBehindDiverted, heldByPause } from './stream.messages';
import { PausedDestinations } from './paused-destinations';
import type { StreamCommit, StreamMessage } from './stream-message';
import { formatLsn } from './stream-message';

export type { StreamRelayConfig } from './stream-relay.config';

/**
 * Publishes committed messages in commit order, a batch at a time, while the reader keeps decoding
 * the next ones (up to `maxBuffered`), and confirms the stream only up to the last commit whose
 * messages are all acknowledged. A message that fails is tried again with backoff, and the
 * messages behind it wait: nothing is skipped, so per-aggregate order holds and nothing is lost.
 */
export class StreamRelay {
  private readonly buffer: StreamMessage[] = [];
  private readonly positions = new AcknowledgedPositions();
  // Each batch's attempts, until the broker acknowledged it or it moved to the table.
  private readonly attempts: StreamBatchAttempts;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly waiting = new Set<() => void>();
  // The aggregates the table holds, which the stream's messages must wait behind. Unknown at start
  // (rows pending from the table mode, a previous run's overflow, dead rows under 'hold'): read.
  private readonly held: HeldAggregates | undefined;
  // The held check and the moves to the table, one at a time.
  private readonly table: StreamTableSide;
  // Destinations an operator paused: their messages go to the table, where the table relay holds them.
  private readonly paused: PausedDestinations | undefined;

  constructor(private readonly config: StreamRelayConfig) {
    // The diagnostics channels hear of the stream's outcomes as of the table relay's (core, like the relay itself).
    const observer = combineObservers([new OutboxChannelsObserver(), config.observer]);
    this.held = config.overflow && new HeldAggregates(config.overflow);
    this.table = new StreamTableSide(config, this.held, { stopped: () => this.stopped, pause: (delayMs) => this.attempts.pause(delayMs) });
    this.attempts = new StreamBatchAttempts(config, observer, this.table, () => this.stopped);
    this.paused = config.overflow && new PausedDestinations(() => config.overflow!.pausedDestinations());
  }

  /** Messages acknowledged by the broker since this relay started. */
  get publishedCount(): number {
    return this.attempts.publishedCount;
  }

  /** Messages moved to the table since this relay started. */
  get divertedMessages(): number {
    return this.table.divertedCount;
  }

  /** When the oldest message received and not yet acknowledged (published or moved to the table) arrived; `undefined` when none waits. */
  get waitingSince(): number | undefined {
    return this.positions.oldestWaitingSince;
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
    this.arrived?.();
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
    this.attempts.wakeAll();
    this.arrived?.();
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

  /**
   * Takes batches from the front of the buffer while fewer than `maxBatchesInFlight` are unsettled,
   * so that one batch publishes while the previous one waits for its acknowledgement. Order per
   * aggregate needs nothing more than the table relay's rule: a batch stops before the first message
   * whose aggregate an unsettled batch holds, so an aggregate's messages are in one unsettled batch
   * at most, whatever becomes of it (published, retried, moved to the table).
   */
  private async drain(): Promise<void> {
    // Starts with an await, so that `running` is set before the loop can end.
    await Promise.resolve();
    const limit = Math.max(1, this.config.maxBatchesInFlight ?? 1);
    const inFlight = new Set<Promise<void>>();
    const busy = new Map<string, number>();
    let stoppedEarly = false;
    try {
      while (!this.stopped && !stoppedEarly) {
        const batch = inFlight.size < limit ? this.takeBatch(busy) : [];
        if (batch.length === 0) {
          if (inFlight.size === 0) break;
          // A batch settling frees its aggregates; a commit arriving may bring a free one.
          await Promise.race([...inFlight, new Promise<void>((resume) => (this.arrived = resume))]);
          this.arrived = undefined;
          continue;
        }
        this.wakeReader();
        const keys = batch.map(aggregateOf);
        for (const key of keys) busy.set(key, (busy.get(key) ?? 0) + 1);
        const run: Promise<void> = this.deliver(batch)
          .then((settled) => void (stoppedEarly ||= !settled))
          .finally(() => {
            for (const key of keys) {
              const left = busy.get(key)! - 1;
              if (left === 0) busy.delete(key);
              else busy.set(key, left);
            }
            inFlight.delete(run);
          });
        inFlight.add(run);
      }
    } finally {
      await Promise.allSettled(inFlight);
    }
  }

  /** Up to `batchSize` messages from the front of the buffer, ending before the first whose aggregate is in an unsettled batch. */
  private takeBatch(busy: ReadonlyMap<string, number>): StreamMessage[] {
    const most = Math.min(this.config.batchSize, this.buffer.length);
    if (busy.size === 0) return this.buffer.splice(0, most);
    let count = 0;
    while (count < most && !busy.has(aggregateOf(this.buffer[count]))) count++;
    return this.buffer.splice(0, count);
  }

  /** One batch, until it is settled and its position may be confirmed; false when the relay stopped first. */
  private async deliver(batch: StreamMessage[]): Promise<boolean> {
    const handedOn = await this.table.handedOn(batch);
    if (handedOn === undefined) return false;
    const fresh = handedOn.size === 0 ? batch : batch.filter((message) => !handedOn.has(message));
    const held = await this.table.heldBehind(fresh);
    if (held === undefined) return false;
    const paused = this.paused ? fresh.filter((message) => this.paused!.holds(message)) : [];
    const direct = held.length === 0 && paused.length === 0 ? fresh : fresh.filter((message) => !held.includes(message) && !paused.includes(message));
    // Published before the held ones reach the table: an aggregate's messages committed before a
    // row that holds the later ones (see HeldAggregates) must not be overtaken by those.
    if (!(await this.attempts.untilAcknowledged(direct))) return false;
    const diverted = fresh
      .filter((message) => held.includes(message) || paused.includes(message))
      .map((message) => ({ message, attempts: 0, error: paused.includes(message) ? heldByPause(message.destination) : heldBehindDiverted() }));
    if (diverted.length > 0 && !(await this.table.divert(diverted))) return false;
    this.positions.acknowledged(batch);
    await this.confirmAdvance();
    return true;
  }

  /** Confirmations one after another, so that positions reach the server (and the saved position) in order. */
  private confirmAdvance(): Promise<void> {
    this.confirming = this.confirming.then(() => this.confirmNext());
    return this.confirming;
  }

  private async confirmNext(): Promise<void> {
    const lsn = this.positions.advance();
    if (lsn === undefined) return;
    try {
      await this.config.confirm(lsn, this.positions.lastAdvanceCarriedMessages);
    } catch (error) {
      // A lost confirmation only means a longer replay after a restart; the next one covers it.
      this.config.logger.warn(`Outbox WAL relay: confirming ${formatLsn(lsn)} failed: ${errorText(error)}`);
    }
  }

  private confirming: Promise<void> = Promise.resolve();
  private arrived: (() => void) | undefined;

  private wakeReader(): void {
    for (const resume of this.waiting) resume();
    this.waiting.clear();
  }
}
