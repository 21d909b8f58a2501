import { BatchPublisher } from '../batch-publisher';
import { toOutgoingMessage } from '../envelope';
import type { OutgoingMessage } from '../outbox-message';
import type { RelayObserver } from '../observe/relay-observer';
import { attemptOutcomes } from './stream-outcomes';
import type { StreamRelayConfig } from './stream-relay.config';
import type { StreamTableSide } from './stream-table-side';
import { heldBehindDiverted } from './stream.messages';
import type { StreamMessage } from './stream-message';
import { asClaimed } from './stream-claim';

type AttemptsConfig = Pick<
  StreamRelayConfig,
  'transports' | 'publishTimeoutMs' | 'retryIf' | 'retryPolicy' | 'envelopeHeaders' | 'relayId' | 'overflow' | 'divertAfterAttempts' | 'published' | 'logger'
>;

/**
 * The attempts of one of the stream's batches: published until the broker acknowledged every
 * message, the failed ones tried again after the retry policy's backoff (the messages behind them
 * wait), or, past `divertAfterAttempts` or after a failure that is final, moved to the table.
 */
export class StreamBatchAttempts {
  private readonly publisher: BatchPublisher;
  private readonly wakers = new Set<() => void>();
  private published = 0;

  constructor(
    private readonly config: AttemptsConfig,
    private readonly observer: RelayObserver,
    private readonly table: Pick<StreamTableSide, 'divert'>,
    private readonly stopped: () => boolean,
  ) {
    this.publisher = new BatchPublisher(config.transports, observer, config.publishTimeoutMs, config.retryIf);
  }

  /** Messages acknowledged by the broker so far. */
  get publishedCount(): number {
    return this.published;
  }

  /** True once every message of the batch is acknowledged (or moved to the table); false if the relay was stopped first. */
  async untilAcknowledged(batch: StreamMessage[]): Promise<boolean> {
    let pending = batch;
    for (let attempt = 1; ; attempt++) {
      const claimed = pending.map((message) => asClaimed(message, attempt));
      const outgoing = new Map<string, OutgoingMessage>(claimed.map((message) => [message.position, toOutgoingMessage(message, this.config.envelopeHeaders)]));
      const { results, durations } = await this.publisher.publishAll(claimed, outgoing, []);
      const delay = this.config.retryPolicy.delayAfter(attempt) ?? this.config.retryPolicy.delayAfter(1) ?? 0;
      // Streamed traffic counts in the same series as the table relay's.
      const outcomes = attemptOutcomes(claimed, results, durations, delay);
      if (outcomes.length > 0) this.observer.settled?.({ relayId: this.config.relayId, outcomes, leaseLost: { published: 0, failed: 0 } });
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
        return this.table.divert(diverted);
      }
      this.config.logger.warn(
        `Outbox WAL relay: ${failed.length} of ${pending.length} messages not acknowledged (attempt ${attempt}${first ? `: ${first.text}` : ''}); ` +
          `the stream waits and tries them again in ${delay} ms.`,
      );
      pending = failed;
      if (this.stopped()) return false;
      await this.pause(delay);
      if (this.stopped()) return false;
    }
  }

  /** Waits `delayMs`, or until `wakeAll` (the relay stopping). */
  async pause(delayMs: number): Promise<void> {
    let wake: (() => void) | undefined;
    await new Promise<void>((resume) => {
      const timer = setTimeout(resume, delayMs);
      wake = () => {
        clearTimeout(timer);
        resume();
      };
      this.wakers.add(wake);
    });
    this.wakers.delete(wake!);
  }

  /** Ends every pause now. */
  wakeAll(): void {
    for (const wake of this.wakers) wake();
  }
}
