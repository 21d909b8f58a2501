import diagnosticsChannel from 'node:diagnostics_channel';
import type { ClaimedMessage } from '../outbox-message';
import type { RelayObserver, SettledBatch } from './relay-observer';

/**
 * `node:diagnostics_channel` names the relay publishes on, for custom instrumentation
 * (`diagnostics_channel.subscribe(OUTBOX_CHANNELS.dead, (event) => …)`). Nothing is built
 * when a channel has no subscriber.
 */
export const OUTBOX_CHANNELS = {
  /** {@link OutboxClaimedEvent}: a relay leased a batch. */
  claimed: 'nest-outbox:claimed',
  /** {@link OutboxPublishedEvent}: the broker acknowledged a message and the row was marked published. */
  published: 'nest-outbox:published',
  /** {@link OutboxFailedEvent}: a publish failed; the row will be retried. */
  failed: 'nest-outbox:failed',
  /** {@link OutboxFailedEvent} with `retryInMs: null`: a publish failed for the last time; the row is dead. */
  dead: 'nest-outbox:dead',
  /** {@link OutboxLeaseLostEvent}: outcomes not recorded because another relay took the rows over. */
  leaseLost: 'nest-outbox:lease-lost',
} as const;

export interface OutboxClaimedEvent {
  relayId: string;
  messages: readonly ClaimedMessage[];
}

export interface OutboxPublishedEvent {
  relayId: string;
  message: ClaimedMessage;
  /** Milliseconds the publish of its group took. */
  durationMs: number;
  /** Milliseconds from the event's `occurredAt` to the settle that followed the acknowledgement. */
  latencyMs: number;
}

export interface OutboxFailedEvent {
  relayId: string;
  message: ClaimedMessage;
  error: string;
  /** Delay before the next attempt; `null` on the `dead` channel. */
  retryInMs: number | null;
  durationMs: number;
}

export interface OutboxLeaseLostEvent {
  relayId: string;
  published: number;
  failed: number;
}

const channels = {
  claimed: diagnosticsChannel.channel(OUTBOX_CHANNELS.claimed),
  published: diagnosticsChannel.channel(OUTBOX_CHANNELS.published),
  failed: diagnosticsChannel.channel(OUTBOX_CHANNELS.failed),
  dead: diagnosticsChannel.channel(OUTBOX_CHANNELS.dead),
  leaseLost: diagnosticsChannel.channel(OUTBOX_CHANNELS.leaseLost),
};

/** Publishes the relay's events on the diagnostics channels. */
export class OutboxChannelsObserver implements RelayObserver {
  constructor(private readonly now: () => number = Date.now) {}

  claimed(relayId: string, messages: readonly ClaimedMessage[]): void {
    if (channels.claimed.hasSubscribers) channels.claimed.publish({ relayId, messages } satisfies OutboxClaimedEvent);
  }

  settled(batch: SettledBatch): void {
    const { relayId, leaseLost } = batch;
    if (channels.published.hasSubscribers || channels.failed.hasSubscribers || channels.dead.hasSubscribers) {
      const now = this.now();
      for (const { message, error, retryInMs, durationMs } of batch.outcomes) {
        if (error === undefined) {
          const latencyMs = now - Date.parse(message.occurredAt);
          channels.published.publish({ relayId, message, durationMs, latencyMs } satisfies OutboxPublishedEvent);
        } else {
          const channel = retryInMs === null ? channels.dead : channels.failed;
          channel.publish({ relayId, message, error, retryInMs: retryInMs ?? null, durationMs } satisfies OutboxFailedEvent);
        }
      }
    }
    if ((leaseLost.published > 0 || leaseLost.failed > 0) && channels.leaseLost.hasSubscribers) {
      channels.leaseLost.publish({ relayId, ...leaseLost } satisfies OutboxLeaseLostEvent);
    }
  }
}
