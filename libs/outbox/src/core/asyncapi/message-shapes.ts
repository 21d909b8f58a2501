import { CLOUD_EVENT_DATA_CONTENT_TYPE, CLOUD_EVENT_EXTENSIONS, CLOUD_EVENT_STRUCTURED_CONTENT_TYPE } from '../cloudevents/cloud-event-attributes';
import type { EnvelopeFormat } from '../cloudevents/envelope-options';
import { ENVELOPE_HEADERS } from '../envelope';
import type { EnvelopeHeaders } from '../cloudevents/envelope-options';
import type { OutboxEventMetadata } from '../event-metadata';
import type { AsyncApiMessage, JsonSchema } from './asyncapi-document.types';
import { cloudEventsBinary, cloudEventsStructured, headersOnlyOnSomeBrokers } from './asyncapi.messages';
import { SCHEMA_POINTER } from './payload-schema';

export const HEADERS_SCHEMA = 'OutboxEnvelopeHeaders';
export const CLOUD_EVENTS_HEADERS_SCHEMA = 'CloudEventsBinaryHeaders';

const text = { type: 'string' };

/** The component key of an event's message in a format: `<type>.v<version>`, and the format's name unless it is the outbox envelope. */
export function messageKey(event: OutboxEventMetadata, format: EnvelopeFormat): string {
  const name = format === 'outbox' ? `${event.type}.v${event.version}` : `${event.type}.v${event.version}.${format}`;
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * The message as a destination of that format receives it (envelope-options.ts): the outbox
 * envelope with `outbox-*` headers, a binary CloudEvent (the payload as the body, `ce_*` headers), or
 * a structured CloudEvent (the whole event as the body).
 */
export function messageOf(event: OutboxEventMetadata, className: string, format: EnvelopeFormat, payload: JsonSchema, source: string | undefined, notes: string[]): AsyncApiMessage {
  const common = { name: event.type, title: className, 'x-outbox-event-type': event.type, 'x-outbox-event-version': event.version };
  const described = (extra: string[]) => ([...notes, ...extra].length > 0 ? { description: [...notes, ...extra].join(' ') } : {});
  if (format === 'cloudevents-binary') {
    return {
      ...common,
      summary: `${event.type}, version ${event.version}, as a binary CloudEvent`,
      ...described([cloudEventsBinary()]),
      contentType: CLOUD_EVENT_DATA_CONTENT_TYPE,
      headers: { $ref: `${SCHEMA_POINTER}${CLOUD_EVENTS_HEADERS_SCHEMA}` },
      payload,
    };
  }
  if (format === 'cloudevents-structured') {
    return { ...common, summary: `${event.type}, version ${event.version}, as a structured CloudEvent`, ...described([cloudEventsStructured()]), contentType: CLOUD_EVENT_STRUCTURED_CONTENT_TYPE, payload: structuredSchema(event, payload, source) };
  }
  return {
    ...common,
    summary: `${event.type}, version ${event.version}`,
    ...described([]),
    contentType: 'application/json',
    headers: { $ref: `${SCHEMA_POINTER}${HEADERS_SCHEMA}` },
    payload: envelopeSchema(event, payload),
  };
}

/** The body of the `outbox` format: the envelope (core/outbox-message.ts `OutboxEnvelope`). */
function envelopeSchema(event: OutboxEventMetadata, payload: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['id', 'type', 'version', 'aggregateType', 'aggregateId', 'occurredAt', 'headers', 'payload'],
    properties: {
      id: { type: 'string', format: 'uuid', description: 'Message id, the same at every attempt: consumers deduplicate on it.' },
      type: { type: 'string', const: event.type },
      version: { type: 'integer', const: event.version },
      aggregateType: text,
      aggregateId: { type: 'string', description: 'Also the message key: the events of one aggregate keep their order.' },
      occurredAt: { type: 'string', format: 'date-time' },
      correlationId: text,
      causationId: text,
      tenantId: text,
      headers: { type: 'object', additionalProperties: text, description: 'Extra headers written with the event (trace context, enrich).' },
      payload,
    },
  };
}

/** The body of `cloudevents-structured` (cloud-event-attributes.ts). */
function structuredSchema(event: OutboxEventMetadata, payload: JsonSchema, source: string | undefined): JsonSchema {
  return {
    type: 'object',
    required: ['specversion', 'id', 'type', 'source', 'subject', 'time', 'datacontenttype', 'data', CLOUD_EVENT_EXTENSIONS.version, CLOUD_EVENT_EXTENSIONS.aggregateType],
    properties: {
      specversion: { type: 'string', const: '1.0' },
      id: { type: 'string', format: 'uuid' },
      type: { type: 'string', const: event.type },
      source: source === undefined ? text : { type: 'string', const: source },
      subject: { type: 'string', description: 'The aggregate id, also the message key.' },
      time: { type: 'string', format: 'date-time' },
      datacontenttype: { type: 'string', const: CLOUD_EVENT_DATA_CONTENT_TYPE },
      data: payload,
      [CLOUD_EVENT_EXTENSIONS.version]: { type: 'integer', const: event.version },
      [CLOUD_EVENT_EXTENSIONS.aggregateType]: text,
      [CLOUD_EVENT_EXTENSIONS.correlationId]: text,
      [CLOUD_EVENT_EXTENSIONS.causationId]: text,
      [CLOUD_EVENT_EXTENSIONS.tenantId]: text,
    },
  };
}

/** The `outbox-*` headers of the `outbox` format: those the `envelope.headers` option sends. */
export function outboxHeadersSchema(sent: EnvelopeHeaders = 'all'): JsonSchema {
  const fields = sent === 'all' ? (Object.keys(ENVELOPE_HEADERS) as Array<keyof typeof ENVELOPE_HEADERS>) : sent === 'id-and-type' ? (['id', 'type'] as const) : [];
  const always = ['id', 'type', 'version', 'aggregateType', 'aggregateId', 'occurredAt'].filter((field) => (fields as readonly string[]).includes(field)) as Array<keyof typeof ENVELOPE_HEADERS>;
  return {
    type: 'object',
    description: headersOnlyOnSomeBrokers(),
    required: always.map((key) => ENVELOPE_HEADERS[key]),
    properties: Object.fromEntries(fields.map((field) => [ENVELOPE_HEADERS[field], { type: 'string', description: `The envelope's "${field}".` }])),
    additionalProperties: text,
  };
}

/** The `ce_*` headers of `cloudevents-binary` (the CloudEvents Kafka binding). */
export function cloudEventsHeadersSchema(): JsonSchema {
  const attributes = ['specversion', 'id', 'type', 'source', 'subject', 'time', 'datacontenttype', CLOUD_EVENT_EXTENSIONS.version, CLOUD_EVENT_EXTENSIONS.aggregateType];
  const optional = [CLOUD_EVENT_EXTENSIONS.correlationId, CLOUD_EVENT_EXTENSIONS.causationId, CLOUD_EVENT_EXTENSIONS.tenantId];
  return {
    type: 'object',
    required: [...attributes.map((name) => `ce_${name}`), 'content-type'],
    properties: {
      ...Object.fromEntries([...attributes, ...optional].map((name) => [`ce_${name}`, text])),
      'content-type': { type: 'string', const: CLOUD_EVENT_DATA_CONTENT_TYPE },
    },
    additionalProperties: text,
  };
}
