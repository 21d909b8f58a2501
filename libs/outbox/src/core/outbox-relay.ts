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

    // A row that cannot be decoded is dead at once, alone; its neighbours are published as usual.
    const { decoded, undecodable } = decodeBatch(messages, this.config.retryPolicy.attemptLimit);
    const sendable = undecodable.size === 0 ? messages : messages.filter((message) => decoded.has(message.position));
    // The store hands out at most one row per aggregate and destination per batch, so the
    // messages of a batch can be published concurrently without breaking their order.
    const sent = await this.publishAll(sendable, decoded);
    const outcomeOf = new Map(sendable.map((message, index) => [message.position, { error: sent.errors[index], durationMs: sent.durations[index] }]));
    const durations = messages.map((message) => outcomeOf.get(message.position)?.durationMs ?? 0);
    const published: string[] = [];
    const failed: FailedDelivery[] = [];
    messages.forEach((message) => {
      const poison = undecodable.get(message.position);
      if (poison !== undefined) return failed.push({ position: message.position, error: poison, retryInMs: null });
      const error = outcomeOf.get(message.position)?.error;
      if (error === undefined) published.push(message.position);
      else failed.push({ position: message.position, error: error.text, retryInMs: error.final ? null : this.config.retryPolicy.delayAfter(message.attempt) });
    });
    const settled = await this.settle(token, published, failed);
    this.wakeUpForRetries(failed);
    const dead = failed.filter((failure) => failure.retryInMs === null).length;
    const failures = new Map(failed.map((failure) => [failure.position, failure]));
    this.observer.settled?.({
      relayId: owner,
      ...settled,
      outcomes: messages.map((message, index) => {
        const failure = failures.get(message.position);
        return { message, error: failure?.error, retryInMs: failure?.retryInMs, durationMs: durations[index] };
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
      }
    }
    try {
      await this.config.store.release(this.owner);
    } catch (error) {
      this.config.logger.warn(`Outbox relay ${this.owner}: could not release leases (they expire by themselves): ${errorText(error)}`);
    }
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

  /** One entry per message, in order: `undefined` when acknowledged, else the error text to record; and how long each took. */
  private async publishAll(
    messages: ClaimedMessage[],
    decoded: ReadonlyMap<string, OutgoingMessage>,
  ): Promise<{ errors: Array<PublishFailure | undefined>; durations: number[] }> {
    const results = new Array<PublishFailure | undefined>(messages.length);
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
        if (!transport) {
          indexes.forEach((index) => (results[index] = { text: noTransportForRow(name), final: false }));
          return;
        }
        const started = performance.now();
        const outcomes = await this.publishGroup(name, transport, indexes.map((index) => messages[index]), decoded);
        const took = performance.now() - started;
        indexes.forEach((index, position) => {
          results[index] = outcomes[position];
          durations[index] = took;
        });
      }),
    );
    return { errors: results, durations };
  }

  private async publishGroup(
    name: string,
    transport: OutboxTransport,
    messages: ClaimedMessage[],
    decoded: ReadonlyMap<string, OutgoingMessage>,
  ): Promise<Array<PublishFailure | undefined>> {
    const outgoing = messages.map((message) => decoded.get(message.position) as OutgoingMessage);
    const finish = this.observer.publishing?.(name, messages, outgoing, transport.name);
    const errors = await this.send(transport, outgoing);
    finish?.(errors.map((error) => error?.text));
    return errors;
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

  private async settle(token: string, published: string[], failed: FailedDelivery[]): Promise<Omit<SettledBatch, 'relayId' | 'outcomes'>> {
    const { store, owner, logger } = this.config;
    const leaseLost = { published: 0, failed: 0 };
    try {
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
