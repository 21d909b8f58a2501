import { randomUUID } from 'node:crypto';
import { types } from 'node:util';
import { decodeBatch } from './row-decoding';
import { clipErrorText } from './message-limits';
import { noTransportForRow } from './outbox.messages';
import type { ClaimedMessage, OutgoingMessage } from './outbox-message';
import type { FailedDelivery, OutboxStore } from './outbox-store.port';
import type { OutboxTransport } from './outbox-transport.port';
import type { RetryPolicy } from './retry-policy';
import { classifyFailure, type PublishFailure, type RetryIf } from './failure-classification';
import { combineObservers, type RelayObserver, type SettledBatch } from './observe/relay-observer';
import { RelayFailureLog } from './observe/relay-failure.log';
import { OutboxChannelsObserver } from './observe/outbox.channels';
import { holdBackBehindPoison, inOrderOfKey, NOT_SENT, runsByKey, type SendResult } from './batch-runs';

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
  leaseMs: number;
  publishTimeoutMs: number;
  logger: RelayLogger;
  /** Follows claims, publishes and outcomes (metrics, tracing, diagnostics channels). */
  observer?: RelayObserver;
  /** Whether an error is worth another attempt; `NonRetryableOutboxError` never is. Default: retry every error. */
  retryIf?: RetryIf;
}

export interface BatchOutcome {
  claimed: number;
  published: number;
  retried: number;
  dead: number;
}

const NOTHING: BatchOutcome = { claimed: 0, published: 0, retried: 0, dead: 0 };

/**
 * Moves rows from the store to the transport: claim a batch under a lease, publish each
 * message and wait for the broker, then settle the batch. A failure never escapes: it
 * becomes a recorded attempt with a retry time, and at last a dead row.
 */
export class OutboxRelay {
  private draining: Promise<void> | undefined;
  private passRequested = false;
  private stopped = false;
  private retryWakeUp: { at: number; timer: NodeJS.Timeout } | undefined;
  /** The batch being published: what the broker acknowledged so far, for a shutdown that cannot wait for the rest. */
  private inFlight: { token: string; acknowledged: string[]; settledEarly: Set<string> } | undefined;

  private readonly observer: RelayObserver;

  constructor(private readonly config: OutboxRelayConfig) {
    // Failures are logged per batch and destination, and diagnostics channels fed, whatever else observes.
    this.observer = combineObservers([new RelayFailureLog(config.logger), new OutboxChannelsObserver(), config.observer]);
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
      this.passRequested = true;
      return this.draining;
    }
    this.draining = this.drain().finally(() => (this.draining = undefined));
    return this.draining;
  }

  /** One claim → publish → settle round. Exposed for tests and for callers that drive their own loop. */
  async publishBatch(): Promise<BatchOutcome> {
    const { store, owner, batchSize, leaseMs } = this.config;
    let messages: ClaimedMessage[];
    const token = randomUUID();
    try {
      messages = await store.claim({ owner, token, limit: batchSize, leaseMs });
    } catch (error) {
      this.config.logger.error(`Outbox claim failed; will retry at the next poll: ${errorText(error)}`, stackOf(error));
      this.observer.claimFailed?.(owner, error);
      this.observer.roundEnded?.({ relayId: owner, claimed: 0, ok: false });
      return NOTHING;
    }
    if (messages.length === 0) {
      this.observer.roundEnded?.({ relayId: owner, claimed: 0, ok: true });
      return NOTHING;
    }
    this.observer.claimed?.(owner, messages);
    const inFlight = { token, acknowledged: [] as string[], settledEarly: new Set<string>() };
    this.inFlight = inFlight;

    // A row that cannot be decoded is dead at once, alone; its neighbours are published as usual,
    // except the rows behind it in its aggregate, which wait for the next claim.
    const { decoded, undecodable } = decodeBatch(messages, this.config.retryPolicy.attemptLimit);
    const { sendable, heldBack } = holdBackBehindPoison(messages, undecodable);
    const sent = await this.publishAll(sendable, decoded, inFlight.acknowledged);
    const outcomeOf = new Map<string, { result: SendResult; durationMs: number }>(sendable.map((message, index) => [message.position, { result: sent.results[index], durationMs: sent.durations[index] }]));
    const published: string[] = [];
    const failed: FailedDelivery[] = [];
    const givenBack: string[] = [...heldBack];
    const attempted: Array<{ message: ClaimedMessage; durationMs: number }> = [];
    messages.forEach((message) => {
      const poison = undecodable.get(message.position);
      if (poison !== undefined) {
        attempted.push({ message, durationMs: 0 });
        return failed.push({ position: message.position, error: poison, retryInMs: null });
      }
      const outcome = outcomeOf.get(message.position);
      if (!outcome) return;
      const { result, durationMs } = outcome;
      if (result === NOT_SENT) return givenBack.push(message.position);
      attempted.push({ message, durationMs });
      if (result === undefined) published.push(message.position);
      else failed.push({ position: message.position, error: result.text, retryInMs: result.final ? null : this.config.retryPolicy.delayAfter(message.attempt) });
    });
    this.inFlight = undefined;
    const settled = await this.settle(
      token,
      published.filter((position) => !inFlight.settledEarly.has(position)),
      failed,
      givenBack,
    );
    this.wakeUpForRetries(failed);
    const dead = failed.filter((failure) => failure.retryInMs === null).length;
    const failures = new Map(failed.map((failure) => [failure.position, failure]));
    this.observer.settled?.({
      relayId: owner,
      ...settled,
      // Rows given back were not attempted: they have no outcome to report.
      outcomes: attempted.map(({ message, durationMs }) => {
        const failure = failures.get(message.position);
        return { message, error: failure?.error, retryInMs: failure?.retryInMs, durationMs };
      }),
    });
    this.observer.roundEnded?.({ relayId: owner, claimed: messages.length, ok: failed.length === 0 && settled.settleError === undefined });
    return { claimed: messages.length, published: published.length, retried: failed.length - dead, dead };
  }

  /** Stops claiming, waits up to `timeoutMs` for the batch in flight, then gives back the leases still held. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryWakeUp?.timer);
    this.retryWakeUp = undefined;
    if (this.draining) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const outcome = await Promise.race([this.draining.then(() => 'done' as const), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        this.config.logger.warn(`Outbox relay ${this.owner}: the batch in flight did not finish within ${timeoutMs} ms; releasing its leases.`);
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
   * The rows of the unfinished batch that the broker already acknowledged are marked published
   * before the leases go back, so that a shutdown does not send them a second time.
   */
  private async settleAcknowledged(): Promise<void> {
    const batch = this.inFlight;
    if (!batch || batch.acknowledged.length === 0) return;
    const positions = [...batch.acknowledged];
    positions.forEach((position) => batch.settledEarly.add(position));
    await this.config.store.markPublished(batch.token, positions).catch((error: unknown) => {
      this.config.logger.warn(`Outbox relay ${this.owner}: could not mark acknowledged rows published (they will be sent again): ${errorText(error)}`);
    });
  }

  /** Retries come due between polls; the relay wakes itself for the earliest one instead of waiting for the next poll. */
  private wakeUpForRetries(failed: FailedDelivery[]): void {
    const delays = failed.map((failure) => failure.retryInMs).filter((delay): delay is number => delay !== null);
    if (delays.length === 0 || this.stopped) return;
    const at = Date.now() + Math.min(...delays);
    if (this.retryWakeUp && this.retryWakeUp.at <= at) return;
    clearTimeout(this.retryWakeUp?.timer);
    const timer = setTimeout(() => {
      this.retryWakeUp = undefined;
      void this.trigger();
    }, at - Date.now());
    timer.unref();
    this.retryWakeUp = { at, timer };
  }

  private async drain(): Promise<void> {
    do {
      this.passRequested = false;
      let outcome: BatchOutcome;
      do {
        outcome = await this.publishBatch();
      } while (!this.stopped && outcome.claimed > 0);
    } while (!this.stopped && this.passRequested);
  }

  /**
   * One entry per message, in order: `undefined` when acknowledged, the failure to record, or
   * `NOT_SENT` for a row behind a failed row of its aggregate; and how long each took.
   */
  private async publishAll(
    messages: ClaimedMessage[],
    decoded: ReadonlyMap<string, OutgoingMessage>,
    acknowledged: string[],
  ): Promise<{ results: SendResult[]; durations: number[] }> {
    const results = new Array<SendResult>(messages.length);
    const durations = new Array<number>(messages.length).fill(0);
    const byTransport = new Map<string, number[]>();
    messages.forEach((message, index) => {
      const indexes = byTransport.get(message.transport);
      if (indexes) indexes.push(index);
      else byTransport.set(message.transport, [index]);
    });
    await Promise.all(
      [...byTransport].map(async ([name, indexes]) => {
        const transport = this.config.transports.get(name);
        const group = indexes.map((index) => messages[index]);
        const outcomes = transport
          ? await this.publishGroup(name, transport, group, decoded, acknowledged)
          : { results: inOrderOfKey(group, () => ({ text: noTransportForRow(name), final: false })), durations: group.map(() => 0) };
        indexes.forEach((index, position) => {
          results[index] = outcomes.results[position];
          durations[index] = outcomes.durations[position];
        });
      }),
    );
    return { results, durations };
  }

  /**
   * A claim may carry several rows of one aggregate and destination. A transport that keeps their
   * order within one batch call gets them all at once; any other gets them in waves (the first
   * row of every aggregate, then the second of those that succeeded, …), so that it never holds
   * two rows of one aggregate at the same time. Rows behind a failure are not sent.
   */
  private async publishGroup(
    name: string,
    transport: OutboxTransport,
    messages: ClaimedMessage[],
    decoded: ReadonlyMap<string, OutgoingMessage>,
    acknowledged: string[],
  ): Promise<{ results: SendResult[]; durations: number[] }> {
    const results = new Array<SendResult>(messages.length).fill(NOT_SENT);
    const acknowledge = (indexes: number[]) => indexes.forEach((index) => results[index] === undefined && acknowledged.push(messages[index].position));
    const durations = new Array<number>(messages.length).fill(0);
    const send = async (indexes: number[]) => {
      const wave = indexes.map((index) => messages[index]);
      const outgoing = wave.map((message) => decoded.get(message.position) as OutgoingMessage);
      const finish = this.observer.publishing?.(name, wave, outgoing, transport.name);
      const started = performance.now();
      const errors = await this.send(transport, outgoing);
      const took = performance.now() - started;
      finish?.(errors.map((error) => error?.text));
      indexes.forEach((index, position) => {
        results[index] = errors[position];
        durations[index] = took;
      });
    };
    const runs = runsByKey(messages);
    if (transport.publishBatch && transport.keepsKeyOrderInBatch) {
      await send(messages.map((_, index) => index));
      // What follows a failure in its aggregate is treated as not sent: never marked published, not charged.
      for (const run of runs) run.slice(run.findIndex((index) => results[index] !== undefined) + 1 || run.length).forEach((index) => (results[index] = NOT_SENT));
      acknowledge(messages.map((_, index) => index));
      return { results, durations };
    }
    for (let depth = 0; ; depth++) {
      const wave = runs.filter((run) => depth < run.length && (depth === 0 || results[run[depth - 1]] === undefined)).map((run) => run[depth]);
      if (wave.length === 0) return { results, durations };
      await send(wave);
      acknowledge(wave);
    }
  }

  private failure(error: unknown): PublishFailure {
    return classifyFailure(error, errorText(error), this.config.retryIf);
  }

  private async send(transport: OutboxTransport, outgoing: OutgoingMessage[]): Promise<Array<PublishFailure | undefined>> {
    if (transport.publishBatch && outgoing.length > 1) {
      try {
        const outcomes = await this.withTimeout(transport, transport.publishBatch(outgoing));
        return outgoing.map((_, index) => (outcomes[index] === undefined ? undefined : this.failure(outcomes[index])));
      } catch (error) {
        return outgoing.map(() => this.failure(error));
      }
    }
    return Promise.all(
      outgoing.map((message) =>
        this.withTimeout(transport, transport.publish(message)).then(
          () => undefined,
          (error: unknown) => this.failure(error),
        ),
      ),
    );
  }

  private async withTimeout<T>(transport: OutboxTransport, publishing: Promise<T>): Promise<T> {
    const { publishTimeoutMs } = this.config;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${transport.name}: no acknowledgement within publishTimeoutMs (${publishTimeoutMs} ms)`)),
        publishTimeoutMs,
      );
    });
    try {
      return await Promise.race([publishing, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async settle(token: string, published: string[], failed: FailedDelivery[], givenBack: string[]): Promise<Omit<SettledBatch, 'relayId' | 'outcomes'>> {
    const { store, owner, logger } = this.config;
    const leaseLost = { published: 0, failed: 0 };
    try {
      // Given back first, so that the next claim finds them free; a lost lease here changes nothing.
      if (givenBack.length > 0) await store.giveBack(token, givenBack);
      if (published.length > 0) {
        const marked = await store.markPublished(token, published);
        leaseLost.published = published.length - marked;
        if (marked < published.length) {
          logger.warn(
            `Outbox relay ${owner}: ${published.length - marked} published row(s) had been taken over after the lease expired; ` +
              `they may be published again (at-least-once). Consider a longer leaseMs.`,
          );
        }
      }
      if (failed.length > 0) {
        const recorded = await store.markFailed(token, failed);
        leaseLost.failed = failed.length - recorded;
        if (recorded < failed.length) {
          // The lease expired meanwhile and another relay holds these rows: nothing was scheduled here.
          logger.warn(
            `Outbox relay ${owner}: ${failed.length - recorded} failed row(s) had been taken over after the lease expired; ` +
              `their outcome is the new holder's. A late acknowledgement may still publish them twice (at-least-once).`,
          );
        }
      }
      return { leaseLost };
    } catch (error) {
      // The leases will expire and the rows be claimed again: a duplicate, never a loss.
      logger.error(`Outbox relay ${owner}: could not record the batch outcome: ${errorText(error)}`, stackOf(error));
      return { leaseLost, settleError: errorText(error) };
    }
  }
}

/** The text recorded for an error: its message, cut to ERROR_LIMITS.textChars so that huge errors do not bloat rows. */
export function errorText(error: unknown): string {
  return clipErrorText(fullErrorText(error));
}

function fullErrorText(error: unknown): string {
  // isNativeError also recognizes errors made in another realm (vm contexts, test sandboxes).
  if (error instanceof Error || types.isNativeError(error)) return (error as Error).message || (error as Error).name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function stackOf(error: unknown): string | undefined {
  return error instanceof Error ? error.stack : undefined;
}
