import type { MessageDraft } from './outbox-message.factory';
import type { DeliveryOptions, MessageMetadata } from './outbox-message';

/** A message added through the explicit API, for code that does not go through an aggregate. */
export interface OutboxMessageInput extends MessageMetadata, DeliveryOptions {
  /** Stable event type name, e.g. `billing.invoice-issued`. */
  type: string;
  /** Payload schema version. Default `1`. */
  version?: number;
  aggregateType: string;
  /** Also the message key: messages with the same aggregate are published in order. */
  aggregateId: string;
  payload: unknown;
  /** Destination; falls back to `resolveTopic` and `defaultTopic`. */
  topic?: string;
  /** Default: now. */
  occurredAt?: Date;
}

/** What every writer (TypeORM's, the data-layer one) hands the message factory for an explicit `add`. */
export function toDraft(input: OutboxMessageInput): MessageDraft {
  return {
    type: input.type,
    version: input.version ?? 1,
    aggregateType: input.aggregateType,
    aggregateId: input.aggregateId,
    payload: input.payload,
    topic: input.topic,
    occurredAt: input.occurredAt,
    metadata: {
      correlationId: input.correlationId,
      causationId: input.causationId,
      tenantId: input.tenantId,
      headers: input.headers,
      deliverAt: input.deliverAt,
      delayMs: input.delayMs,
    },
  };
}
