import { randomUUID } from 'node:crypto';
import { decodeBatch } from './row-decoding';
import type { EnvelopeHeaders } from './cloudevents/envelope-options';
import type { ClaimedMessage } from './outbox-message';
import type { FailedDelivery, OutboxStore } from './outbox-store.port';
import type { OutboxTransport } from './outbox-transport.port';
import type { RetryPolicy } from './retry-policy';
import type { RetryIf } from './failure-classification';
import { combineObservers, type RelayObserver } from './observe/relay-observer';
import { RelayFailureLog } from './observe/relay-failure.log';
import { OutboxChannelsObserver } from './observe/outbox.channels';
import { holdBackBehindPoison } from './batch-runs';
import { BatchPublisher } from './batch-publisher';
import { recordOutcomes, reportedOutcomes, sortOutcomes } from './batch-settlement';
import { errorText, stackOf } from './error-text';
import { publishedRowsTakenOver } from './outbox.messages';
import type { SettledBatch } from './observe/relay-observer';
import type { RoundTurns } from './round-turns';
import { DelayedWakeUps } from './delayed-wake-ups';
import { RelayRounds } from './relay-rounds';

export { errorText } from './error-text';

export interface RelayLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string, stack?: string): void;
}

export interface OutboxRelayConfig {
  store: OutboxStore;
  /** Transports by name; rows name theirs (`'default'` unless a route says otherwise). */
  transports: ReadonlyMap<string, OutboxTransport>;
  retryPolicy: RetryPolicy;
  owner: string;
  batchSize: number;
  /**
   * Claimed batches that may be on their way at once: the next claim runs while earlier batches
   * publish and settle. Default 1 (one claim → publish → settle at a time).
   */
  maxBatchesInFlight?: number;
  leaseMs: number;
  publishTimeoutMs: number;
  logger: RelayLogger;
  /** Follows claims, publishes and outcomes (metrics, tracing, diagnostics channels). */
  observer?: RelayObserver;
  /** Whether an error is worth another attempt; `OutboxNonRetryableError` never is. Default: retry every error. */
  retryIf?: RetryIf;
  /**
   * Shared with other relays (one per tenant database): a turn is taken before each claim and given
   * back once its batch is settled, or at once when the claim found nothing. Default: none, no wait.
   */
  turns?: RoundTurns;
  /** Which envelope fields also go as `outbox-*` headers (the `envelope.headers` option). Default `'all'`. */
  envelopeHeaders?: EnvelopeHeaders;
}

export interface BatchOutcome {
  claimed: number;
  published: number;
  retried: number;
  dead: number;
}

const NOTHING: BatchOutcome = { claimed: 0, published: 0, retried: 0, dead: 0 };

/** A claimed batch until it is settled: what the broker acknowledged so far, for a shutdown that cannot wait for the rest. */
interface BatchInFlight {
  token: string;
  messages: ClaimedMessage[];
  acknowledged: string[];
  settledEarly: Set<string>;
}

/**
 * Moves rows from the store to the transport: claim a batch under a lease, publish each
 * message and wait for the broker, then settle the batch. A failure never escapes: it
 * becomes a recorded attempt with a retry time, and at last a dead row.
 */
export class OutboxRelay {
  private draining: Promise<void> | undefined;
  private stopped = false;
  // Retries come due between polls; the relay wakes itself for each instead of waiting for the next poll.
  private readonly retryWakeUps = new DelayedWakeUps(() => void this.trigger());
  private readonly inFlight = new Set<BatchInFlight>();

  private readonly observer: RelayObserver;
  private readonly publisher: BatchPublisher;
  // Claims, publishes and settles overlapping, up to maxBatchesInFlight at once.
  private readonly rounds: RelayRounds<BatchInFlight>;

  constructor(private readonly config: OutboxRelayConfig) {
    // Failures are logged per batch and destination, and diagnostics channels fed, whatever else observes.
    this.observer = combineObservers([new RelayFailureLog(config.logger), new OutboxChannelsObserver(), config.observer]);
    this.publisher = new BatchPublisher(config.transports, this.observer, config.publishTimeoutMs, config.retryIf);
    this.rounds = new RelayRounds(config, {
      stopped: () => this.stopped,
      claim: () => this.claim(),
      deliver: (batch, chain) => this.deliver(batch, chain),
    });
  }

  get owner(): string {
    return this.config.owner;
  }

  /**
   * Publishes until nothing is claimable. Calls made while a drain runs are folded into one
   * more pass, so a burst of commits costs one extra claim, not one per commit.
   */
  trigger(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.draining) {
      this.rounds.requestPass();
      return this.draining;
    }
    this.draining = this.rounds.drain().finally(() => (this.draining = undefined));
    return this.draining;
  }

  /** One claim → publish → settle round. Exposed for tests and for callers that drive their own loop. */
  async publishBatch(): Promise<BatchOutcome> {
    const batch = await this.claim();
    return batch ? (await this.deliver(batch)).outcome : NOTHING;
  }

  /** Leases the next batch; `undefined` when nothing is claimable or the claim failed (logged, retried at the next poll). */
  private async claim(): Promise<BatchInFlight | undefined> {
    const { store, owner, batchSize, leaseMs } = this.config;
    let messages: ClaimedMessage[];
    const token = randomUUID();
    try {
      messages = await store.claim({ owner, token, limit: batchSize, leaseMs });
    } catch (error) {
      this.config.logger.error(`Outbox claim failed; will retry at the next poll: ${errorText(error)}`, stackOf(error));
      this.observer.claimFailed?.(owner, error);
      this.observer.roundEnded?.({ relayId: owner, claimed: 0, ok: false, completed: false });
      return undefined;
    }
    return this.claimedBatch(token, messages);
  }

  /** A claim's rows as a batch in flight; `undefined` when it found nothing. */
  private claimedBatch(token: string, messages: ClaimedMessage[]): BatchInFlight | undefined {
    const { owner } = this.config;
    if (messages.length === 0) {
      this.observer.roundEnded?.({ relayId: owner, claimed: 0, ok: true, completed: true });
      return undefined;
    }
    this.observer.claimed?.(owner, messages);
    const batch: BatchInFlight = { token, messages, acknowledged: [], settledEarly: new Set<string>() };
    this.inFlight.add(batch);
    return batch;
  }

  /**
   * Publishes a claimed batch and records its outcome. Never throws: failures become attempts.
   * With `chain`, a batch published whole is settled in the statement that makes the next claim,
   * where the store can (`settleAndClaim`), and that claim's batch comes back as `next`.
   */
  private async deliver(batch: BatchInFlight, chain = false): Promise<{ outcome: BatchOutcome; next?: BatchInFlight; settledWithClaim: boolean }> {
    const { owner, retryPolicy } = this.config;
    const { token, messages } = batch;
    // A row that cannot be decoded is dead at once, alone; its neighbours are published as usual,
    // except the rows behind it in its aggregate, which wait for the next claim.
    const { decoded, undecodable } = decodeBatch(messages, retryPolicy.attemptLimit, this.config.envelopeHeaders);
    const { sendable, heldBack } = holdBackBehindPoison(messages, undecodable);
    const sent = await this.publisher.publishAll(sendable, decoded, batch.acknowledged);
    const { published, failed, givenBack, attempted } = sortOutcomes(messages, { undecodable, heldBack, sendable, sent }, retryPolicy);
    // From here the settle records every outcome; a shutdown that stops waiting has nothing more to mark.
    this.inFlight.delete(batch);
    const toMark = published.filter((position) => !batch.settledEarly.has(position));
    const combined = chain && failed.length === 0 && givenBack.length === 0 && toMark.length > 0 ? await this.settleAndClaim(token, toMark) : undefined;
    const settled = combined?.settled ?? (await recordOutcomes(this.config, token, toMark, failed, givenBack));
    this.wakeUpForRetries(failed);
    const dead = failed.filter((failure) => failure.retryInMs === null).length;
    this.observer.settled?.({ relayId: owner, ...settled, outcomes: reportedOutcomes(attempted, failed) });
    const completed = settled.settleError === undefined;
    this.observer.roundEnded?.({ relayId: owner, claimed: messages.length, ok: failed.length === 0 && completed, completed });
    const next = combined ? this.claimedBatch(combined.token, combined.claimed) : undefined;
    const outcome = { claimed: messages.length, published: published.length, retried: failed.length - dead, dead };
    return { outcome, next, settledWithClaim: combined !== undefined };
  }

  /**
   * A batch's settle and the next claim in one statement, so that a busy aggregate's next run does
   * not wait for a round trip of its own. `undefined` when the store cannot or the statement failed
   * (it changed nothing then): the batch is settled on its own.
   */
  private async settleAndClaim(
    token: string,
    published: string[],
  ): Promise<{ settled: Omit<SettledBatch, 'relayId' | 'outcomes'>; token: string; claimed: ClaimedMessage[] } | undefined> {
    const { store, owner, batchSize, leaseMs, logger } = this.config;
    if (!store.settleAndClaim || this.stopped) return undefined;
    const next = randomUUID();
    try {
      const { settled, claimed } = await store.settleAndClaim(token, published, { owner, token: next, limit: batchSize, leaseMs });
      const lost = published.length - settled;
      if (lost > 0) logger.warn(publishedRowsTakenOver(owner, lost));
      return { settled: { leaseLost: { published: lost, failed: 0 } }, token: next, claimed };
    } catch (error) {
      logger.warn(`Outbox relay ${owner}: could not settle a batch together with the next claim; settling it alone: ${errorText(error)}`);
      return undefined;
    }
  }

  /** Stops claiming, waits up to `timeoutMs` for the batches in flight, then gives back the leases still held. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    this.retryWakeUps.stop();
    if (this.draining) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const outcome = await Promise.race([this.draining.then(() => 'done' as const), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        this.config.logger.warn(`Outbox relay ${this.owner}: the batches in flight did not finish within ${timeoutMs} ms; releasing their leases.`);
        await this.settleAcknowledged();
      }
    }
    try {
      await this.config.store.release(this.owner);
    } catch (error) {
      this.config.logger.warn(`Outbox relay ${this.owner}: could not release leases (they expire by themselves): ${errorText(error)}`);
    }
  }

  /**
   * The rows of the unfinished batches that the broker already acknowledged are marked published
   * before the leases go back, so that a shutdown does not send them a second time.
   */
  private async settleAcknowledged(): Promise<void> {
    for (const batch of this.inFlight) {
      if (batch.acknowledged.length === 0) continue;
      const positions = [...batch.acknowledged];
      positions.forEach((position) => batch.settledEarly.add(position));
      await this.config.store.markPublished(batch.token, positions).catch((error: unknown) => {
        this.config.logger.warn(`Outbox relay ${this.owner}: could not mark acknowledged rows published (they will be sent again): ${errorText(error)}`);
      });
    }
  }

  /** One wake-up for the earliest retry of a batch: a claim then takes every row of it that is due. */
  private wakeUpForRetries(failed: FailedDelivery[]): void {
    const delays = failed.map((failure) => failure.retryInMs).filter((delay): delay is number => delay !== null);
    if (delays.length > 0 && !this.stopped) this.retryWakeUps.schedule(Math.min(...delays));
  }
}
