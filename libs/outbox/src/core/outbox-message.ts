import type { ClaimedPayload } from './claim-check/claim-check-reference';

/**
 * The life of an outbox row. A row is `pending` until the broker has acknowledged it
 * (`published`) or it has used up its attempts (`dead`); a dead row is requeued (`pending`
 * again) or `discarded` by an operator. Whether a pending row is being
 * worked on is not a status: it is a lease (owner + expiry) so that a crashed relay's
 * rows become claimable again by themselves.
 */
export type OutboxMessageStatus = 'pending' | 'published' | 'dead' | 'discarded';

/** Who caused a message and on whose behalf: copied onto the row and every published copy. */
export interface MessageMetadata {
  correlationId?: string;
  causationId?: string;
  tenantId?: string;
  /** Extra headers (trace context, for instance). Values must be strings. */
  headers?: Record<string, string>;
}

/**
 * When a message may be published at the earliest. The row waits in the outbox until then and,
 * like any pending row, holds back later messages of its aggregate and destination (order is kept).
 */
export interface DeliveryOptions {
  /** Publish at or after this time (an earlier time means now). */
  deliverAt?: Date;
  /** Publish at least this many milliseconds after the save (0 or more). */
  delayMs?: number;
}

/** What `recordEvent` and the explicit API accept next to the event: metadata and delivery time. */
export type RecordEventOptions = MessageMetadata & DeliveryOptions;

/** What a consumer receives as the message body, whatever the transport. */
export interface OutboxEnvelope {
  id: string;
  type: string;
  version: number;
  aggregateType: string;
  aggregateId: string;
  occurredAt: string;
  correlationId?: string;
  causationId?: string;
  tenantId?: string;
  headers: Record<string, string>;
  payload: unknown;
}

/** Which event of which aggregate a row carries, and where it goes: what every view of a row shares. */
export interface RoutedEvent {
  id: string;
  type: string;
  version: number;
  aggregateType: string;
  aggregateId: string;
  /** Name of the transport that publishes this row (`'default'` unless a route names another). */
  transport: string;
  /** Topic, queue, subject or pattern on that transport. */
  destination: string;
}

/** A message about to be written: the envelope plus its destination, payload already serialized. */
export interface NewOutboxMessage extends RoutedEvent {
  occurredAt: Date;
  correlationId?: string;
  causationId?: string;
  tenantId?: string;
  headers: Record<string, string>;
  payloadJson: string;
  /** Not claimable until this many milliseconds after the write, by the database's clock. */
  delayMs?: number;
  /** The payload stored out of the message by the claim check (on the draft's first row only); `payloadJson` is then its reference. */
  claimed?: ClaimedPayload;
}

/** A row the relay holds a lease on. `position` is the commit-order key, kept as a string (bigint). */
export interface ClaimedMessage extends Omit<NewOutboxMessage, 'occurredAt'> {
  position: string;
  occurredAt: string;
  /** Attempts including the one about to be made. */
  attempt: number;
  /** Set by a store when a column of the row could not be read; the relay dead-letters such a row alone. */
  decodeError?: { part: string; cause: string };
  /**
   * The row's error history as stored (a JSON array of `{ at, error }`, the latest
   * `ERROR_LIMITS.historyEntries` failures); absent or null when no failure was recorded. It tells a
   * row that failed from one whose claims ended without an outcome, when it is over `maxAttempts`.
   */
  errorHistory?: string | null;
}

/** The transport-neutral view of a message that a transport publishes. */
export interface OutgoingMessage {
  /** Topic, queue, subject or pattern. */
  destination: string;
  /** Partitioning / ordering key: the aggregate id. */
  key: string;
  /** Envelope fields as flat string headers, for brokers that carry headers. */
  headers: Record<string, string>;
  envelope: OutboxEnvelope;
  /**
   * The JSON value to send as the body instead of the envelope: set for destinations whose format
   * is a CloudEvents one (the payload in binary mode, the whole CloudEvent in structured mode; see
   * the `envelope` option). A transport that sends it says so in `envelopeFormats`.
   */
  body?: unknown;
  /**
   * Bytes to send as the body as they are, in place of `body` and the envelope: set for events with
   * a schema when the module has `schemaRegistry` (the payload in the Confluent wire format; the
   * envelope's fields travel in `headers`). A transport that sends them says so in `encodedBodies`.
   */
  encoded?: Buffer;
}

/** What a transport sends as the message body: `body` when the destination's format set one, else the envelope. */
export function bodyOf(message: OutgoingMessage): unknown {
  return message.body !== undefined ? message.body : message.envelope;
}
