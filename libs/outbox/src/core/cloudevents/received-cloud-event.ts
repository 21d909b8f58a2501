import type { OutboxEnvelope } from '../outbox-message';
import { CLOUD_EVENT_EXTENSIONS, CLOUD_EVENT_STRUCTURED_CONTENT_TYPE } from './cloud-event-attributes';

// Reading needs no SDK: a consumer of CloudEvents the outbox published installs nothing more.

type Headers = Record<string, string>;

/** A Kafka message as a client library hands it (kafkajs's `message`, a Nest `KafkaContext`'s `getMessage()`): a CloudEvent in either mode. */
export interface ReceivedKafkaMessage {
  value: unknown;
  headers?: unknown;
  key?: unknown;
}

/**
 * The outbox envelope of a delivery in a CloudEvents format, or `undefined` when it is none:
 * - a structured CloudEvent, as an object (what Nest hands a handler once it parsed the JSON), as
 *   JSON text with a `content-type: application/cloudevents+json` header, or as a Kafka message;
 * - a binary CloudEvent: `ce_*` (Kafka) or `ce-*` headers, the body being the payload; give the
 *   headers (a Kafka message's, a record, or the Nest context of the handler).
 * The envelope's id is the CloudEvent's id, which is the outbox message id: an inbox dedupes on it.
 */
export function envelopeOfCloudEvent(body: unknown, headerSource?: unknown): OutboxEnvelope | undefined {
  const headers = headersOf(headerSource);
  if (isKafkaMessage(body) && headerSource === undefined) return envelopeOfCloudEvent(body.value, body.headers);
  const prefix = headers['ce_id'] !== undefined ? 'ce_' : headers['ce-id'] !== undefined ? 'ce-' : undefined;
  if (prefix) return fromBinary(body, headers, prefix);
  const structured = asStructured(body, headers['content-type']);
  return structured ? fromAttributes(structured, structured.data, userHeaders(headers, undefined)) : undefined;
}

/** A structured CloudEvent: an object with a `specversion` (and, to be worth reading, an id). */
export function isStructuredCloudEvent(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) && typeof (value as { specversion?: unknown }).specversion === 'string';
}

function fromBinary(body: unknown, headers: Headers, prefix: string): OutboxEnvelope {
  const attributes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) if (name.startsWith(prefix)) attributes[name.slice(prefix.length)] = value;
  const contentType = attributes.datacontenttype ?? headers['content-type'];
  return fromAttributes(attributes, dataOf(body, typeof contentType === 'string' ? contentType : undefined), userHeaders(headers, prefix));
}

function fromAttributes(attributes: Record<string, unknown>, data: unknown, headers: Headers): OutboxEnvelope {
  const text = (name: string) => (typeof attributes[name] === 'string' ? (attributes[name] as string) : undefined);
  const version = Number(attributes[CLOUD_EVENT_EXTENSIONS.version] ?? 1);
  const envelope = {
    id: attributes.id,
    type: attributes.type,
    // An event from elsewhere has no version extension: version 1, as an event class without one.
    version: Number.isSafeInteger(version) ? version : undefined,
    aggregateType: text(CLOUD_EVENT_EXTENSIONS.aggregateType) ?? '',
    aggregateId: text('subject') ?? '',
    occurredAt: text('time') ?? '',
    correlationId: text(CLOUD_EVENT_EXTENSIONS.correlationId),
    causationId: text(CLOUD_EVENT_EXTENSIONS.causationId),
    tenantId: text(CLOUD_EVENT_EXTENSIONS.tenantId),
    headers,
    payload: data,
  };
  // Missing or mistyped id/type stay as they came: the inbox's checks name them.
  return envelope as OutboxEnvelope;
}

function asStructured(body: unknown, contentType: string | undefined): Record<string, unknown> | undefined {
  if (isStructuredCloudEvent(body)) return body;
  if (!contentType?.startsWith(CLOUD_EVENT_STRUCTURED_CONTENT_TYPE) || !(typeof body === 'string' || Buffer.isBuffer(body))) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString());
    return isStructuredCloudEvent(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The payload of a binary event: JSON text parsed when the content type says JSON, an already parsed body as is. */
function dataOf(body: unknown, contentType: string | undefined): unknown {
  if (!(typeof body === 'string' || Buffer.isBuffer(body))) return body;
  const text = body.toString();
  if (contentType !== undefined && !/[/+]json\b/.test(contentType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The headers that are neither attributes nor the content type: the user's, as the outbox envelope carries them. */
function userHeaders(headers: Headers, prefix: string | undefined): Headers {
  const kept: Headers = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'content-type' || (prefix && name.startsWith(prefix))) continue;
    kept[name] = value;
  }
  return kept;
}

function isKafkaMessage(value: unknown): value is { value: unknown; headers: unknown } {
  return typeof value === 'object' && value !== null && 'value' in value && typeof (value as { headers?: unknown }).headers === 'object' && !isStructuredCloudEvent(value);
}

/**
 * Headers as lowercase names and string values, from a record (kafkajs gives Buffers, arrays for
 * repeated headers), a Kafka or RabbitMQ message, or a Nest context (`KafkaContext`, `RmqContext`, `NatsContext`).
 */
export function headersOf(source: unknown): Headers {
  if (typeof source !== 'object' || source === null) return {};
  const context = source as { getMessage?: () => unknown; getHeaders?: () => unknown; getArgs?: unknown };
  if (typeof context.getArgs === 'function') {
    if (typeof context.getHeaders === 'function') return natsHeaders(context.getHeaders());
    const message = typeof context.getMessage === 'function' ? (context.getMessage() as { headers?: unknown; properties?: { headers?: unknown } } | undefined) : undefined;
    return headersOf(message?.headers ?? message?.properties?.headers);
  }
  const headers: Headers = {};
  for (const [name, value] of Object.entries(source)) {
    const first: unknown = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') headers[name.toLowerCase()] = first;
    else if (Buffer.isBuffer(first)) headers[name.toLowerCase()] = first.toString('utf8');
    else if (typeof first === 'number' || typeof first === 'boolean') headers[name.toLowerCase()] = String(first);
  }
  return headers;
}

function natsHeaders(headers: unknown): Headers {
  const nats = headers as { keys?: () => string[]; get?: (name: string) => string } | undefined;
  if (typeof nats?.keys !== 'function' || typeof nats.get !== 'function') return {};
  return Object.fromEntries(nats.keys().map((name) => [name.toLowerCase(), nats.get!(name)]));
}
