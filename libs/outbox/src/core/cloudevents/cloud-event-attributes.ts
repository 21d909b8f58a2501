import type { OutboxEnvelope } from '../outbox-message';

/**
 * CloudEvents extension attributes carrying the envelope fields that have no core attribute.
 * Names follow the CloudEvents rule: lowercase a–z and 0–9, at most 20 characters.
 */
export const CLOUD_EVENT_EXTENSIONS = {
  version: 'eventversion',
  aggregateType: 'aggregatetype',
  correlationId: 'correlationid',
  causationId: 'causationid',
  tenantId: 'tenantid',
} as const;

/** The content type of the payload (`datacontenttype`): payloads are JSON. */
export const CLOUD_EVENT_DATA_CONTENT_TYPE = 'application/json';

/** The content type of a structured-mode body. */
export const CLOUD_EVENT_STRUCTURED_CONTENT_TYPE = 'application/cloudevents+json';

/** A CloudEvent 1.0 of an outbox message, as plain attributes: what the SDK's `CloudEvent` is built from. */
export interface CloudEventAttributes {
  specversion: '1.0';
  id: string;
  type: string;
  source: string;
  subject: string;
  time: string;
  datacontenttype: typeof CLOUD_EVENT_DATA_CONTENT_TYPE;
  data: unknown;
  eventversion: number;
  aggregatetype: string;
  correlationid?: string;
  causationid?: string;
  tenantid?: string;
}

/**
 * The CloudEvent of an envelope: id = message id (what an inbox dedupes on), type = event type,
 * subject = aggregate id, time = occurredAt, data = payload; the rest as extensions. User headers
 * are not attributes: they travel as the transport's headers, as with the outbox envelope.
 */
export function cloudEventAttributes(envelope: OutboxEnvelope, source: string): CloudEventAttributes {
  const attributes: CloudEventAttributes = {
    specversion: '1.0',
    id: envelope.id,
    type: envelope.type,
    source,
    subject: envelope.aggregateId,
    time: envelope.occurredAt,
    datacontenttype: CLOUD_EVENT_DATA_CONTENT_TYPE,
    data: envelope.payload,
    [CLOUD_EVENT_EXTENSIONS.version]: envelope.version,
    [CLOUD_EVENT_EXTENSIONS.aggregateType]: envelope.aggregateType,
  };
  if (envelope.correlationId) attributes[CLOUD_EVENT_EXTENSIONS.correlationId] = envelope.correlationId;
  if (envelope.causationId) attributes[CLOUD_EVENT_EXTENSIONS.causationId] = envelope.causationId;
  if (envelope.tenantId) attributes[CLOUD_EVENT_EXTENSIONS.tenantId] = envelope.tenantId;
  return attributes;
}
