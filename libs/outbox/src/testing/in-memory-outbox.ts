import { Injectable } from '@nestjs/common';
import { InMemoryOutboxStore } from '../core/in-memory-outbox.store';
import { OutboxMessageFactory } from '../core/outbox-message.factory';
import { resolveOutboxSettings, type OutboxSettings } from '../core/outbox-options';
import { OutboxRelay, type BatchOutcome } from '../core/outbox-relay';
import { RetryPolicy } from '../core/retry-policy';
import { toDraft, type OutboxMessageInput } from '../core/outbox-message-input';
import { RecordingOutboxTransport } from './recording-outbox.transport';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Stands in for `OutboxPublisher` in unit tests: messages go to an in-memory store (built by the
 * same factory as in production, so topics, routes and payload checks apply) and a relay publishes
 * them to a `RecordingOutboxTransport` when the test says so.
 */
@Injectable()
export class InMemoryOutbox {
  readonly store = new InMemoryOutboxStore();
  private readonly factory: OutboxMessageFactory;
  private readonly relay: OutboxRelay;

  constructor(
    readonly transport: RecordingOutboxTransport,
    settings: Omit<OutboxSettings, 'transport'> = {},
  ) {
    const resolved = resolveOutboxSettings({ ...settings, relay: true }, () => 'testing');
    // With the claim check on, a large payload reaches a consumer whole once fetched: the kit keeps it inline, up to what the check stores.
    this.factory = new OutboxMessageFactory(resolved.claimCheck ? { ...resolved, maxPayloadBytes: resolved.claimCheck.maxBytes } : resolved);
    this.relay = new OutboxRelay({
      store: this.store,
      transports: new Map([['default', transport]]),
      retryPolicy: new RetryPolicy(resolved.maxAttempts, { initialMs: 0, maxMs: 0, jitter: 0 }),
      owner: 'testing',
      batchSize: resolved.batchSize,
      leaseMs: resolved.leaseMs,
      publishTimeoutMs: resolved.publishTimeoutMs,
      logger: quiet,
    });
  }

  /** Same call as `OutboxPublisher.add`; the manager, if passed, is ignored. */
  async add(managerOrMessages: unknown, messages?: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    const input = (messages ?? managerOrMessages) as OutboxMessageInput | OutboxMessageInput[];
    const built = (Array.isArray(input) ? input : [input]).flatMap((message) => this.factory.create(toDraft(message)));
    this.store.add(built);
    return built.map((message) => message.id);
  }

  /** One claim → publish → settle round of the relay. */
  runRelayOnce(): Promise<BatchOutcome> {
    return this.relay.publishBatch();
  }

  /** Runs the relay until nothing is claimable now. */
  drain(): Promise<void> {
    return this.relay.trigger();
  }
}
