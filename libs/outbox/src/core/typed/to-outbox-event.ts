import { getOutboxEventMetadata } from '../event-metadata';
import { OutboxNonRetryableError } from '../outbox.errors';
import type { OutboxEnvelope } from '../outbox-message';
import { envelopeOfCloudEvent, type ReceivedKafkaMessage } from '../cloudevents/received-cloud-event';

/** What `toOutboxEvent` reads: an outbox envelope, a structured CloudEvent, or a Kafka message holding a CloudEvent in either mode. */
export type ReceivedEvent = Pick<OutboxEnvelope, 'type' | 'version' | 'payload'> | { specversion: string; type: string; data?: unknown } | ReceivedKafkaMessage;
import { payloadProblems } from './payload-validation';
import { CLAIM_CHECK_FIELD, describeReference, referenceOf, type ClaimCheckReference } from '../claim-check/claim-check-reference';
import { claimCheckedPayloadUnresolved } from '../claim-check/claim-check.messages';
import { invalidPayload, newerVersion, notAnEventClass, olderVersionWithoutUpcaster, wrongEventType } from './typed-events.messages';

/**
 * A received payload that can never be handled (wrong type, unknown version, invalid fields).
 * Non-retryable: an in-process handler throwing it sends its row to dead at once.
 */
export class OutboxEventValidationError extends OutboxNonRetryableError {
  override readonly name = 'OutboxNonRetryableError';
}

type EventClass<T> = new (...args: any[]) => T;

/**
 * Turns a received envelope into an instance of its `@OutboxEvent` class: checks the type,
 * brings an older version to the current shape with the class's `upcast` hook, builds the
 * instance (class-transformer) and, with `validate: true`, validates it (class-validator).
 * A structured CloudEvent (or a Kafka message holding one in either mode) is read as its envelope:
 * the version comes from its `eventversion` extension.
 */
export function toOutboxEvent<T extends object>(eventClass: EventClass<T>, received: ReceivedEvent): T {
  const envelope = (envelopeOfCloudEvent(received) ?? received) as Pick<OutboxEnvelope, 'type' | 'version' | 'payload'>;
  const metadata = getOutboxEventMetadata(eventClass.prototype);
  if (!metadata) throw new OutboxEventValidationError(notAnEventClass(eventClass.name));
  if (envelope?.type !== metadata.type) throw new OutboxEventValidationError(wrongEventType(metadata.type, envelope?.type));
  const version = Number(envelope.version ?? 1);
  if (version > metadata.version) throw new OutboxEventValidationError(newerVersion(metadata.type, version, metadata.version));
  // A reference where the payload should be is refused, never validated or built into an empty event.
  const reference = unresolvedReference(envelope);
  if (reference) throw new OutboxNonRetryableError(claimCheckedPayloadUnresolved(metadata.type, describeReference(reference)));
  let payload = envelope.payload;
  if (version < metadata.version) {
    if (!metadata.upcast) throw new OutboxEventValidationError(olderVersionWithoutUpcaster(metadata.type, version, metadata.version));
    payload = metadata.upcast({ type: metadata.type, version, payload });
  }
  if (metadata.validate) {
    const { instance, problems } = payloadProblems(metadata.type, eventClass, payload);
    if (problems.length > 0) throw new OutboxEventValidationError(invalidPayload(metadata.type, problems, 'receive'));
    return instance as T;
  }
  // Without validation an instance is still built, so methods and getters of the class work.
  return Object.assign(Object.create(eventClass.prototype) as T, payload);
}

/** The claim-check reference of an envelope whose payload is still the reference (not fetched yet). */
function unresolvedReference(envelope: { headers?: Record<string, unknown>; payload?: unknown }): ClaimCheckReference | undefined {
  const payload = envelope.payload as Record<string, unknown> | null | undefined;
  if (typeof payload !== 'object' || payload === null || !(CLAIM_CHECK_FIELD in payload)) return undefined;
  return referenceOf(envelope.headers);
}
