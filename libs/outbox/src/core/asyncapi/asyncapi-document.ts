import { ENVELOPE_HEADERS } from '../envelope';
import { DEFAULT_TRANSPORT } from '../outbox-options';
import { declaredAggregates, declaredEvents, type OutboxEventMetadata, type PublishesEventsOptions } from '../event-metadata';
import type { AsyncApiChannel, AsyncApiDocument, AsyncApiMessage, AsyncApiOperation, JsonSchema } from './asyncapi-document.types';
import type { ResolvedAsyncApiOptions } from './asyncapi-options';
import { destinationAtRunTime, destinationByAggregate, headersOnlyOnSomeBrokers, noDeclaredEvents, olderVersions, runtimeOnly } from './asyncapi.messages';
import { destinationsOfEvent, type DeclaredAggregate, type DestinationSettings, type EventDestination } from './event-destinations';
import { payloadSchemaOf, SCHEMA_POINTER, type PayloadSchema } from './payload-schema';

export const HEADERS_SCHEMA = 'OutboxEnvelopeHeaders';

export interface AsyncApiInput extends ResolvedAsyncApiOptions {
  settings: DestinationSettings;
  /** Default: every class declared with `@OutboxEvent` in this process. */
  events?: { eventClass: Function; metadata: OutboxEventMetadata }[];
  /** Default: every class declared with `@PublishesEvents` in this process. */
  aggregates?: { aggregateClass: Function; options: PublishesEventsOptions }[];
  /** Default: from class-validator's decorators (see payload-schema.ts). */
  payloadSchemaOf?: (eventClass: Function) => PayloadSchema;
}

/**
 * The AsyncAPI 3.0.0 document of what the app publishes: a channel per destination its declared
 * events go to, a `send` operation per channel, a message per event type (its current version)
 * whose payload is the envelope the relay sends, with the event's own schema as `payload`.
 */
export function buildAsyncApiDocument(input: AsyncApiInput): AsyncApiDocument {
  const events = [...(input.events ?? declaredEvents())].sort((a, b) => a.metadata.type.localeCompare(b.metadata.type));
  const aggregates: DeclaredAggregate[] = (input.aggregates ?? declaredAggregates()).map(({ aggregateClass, options }) => ({
    aggregateType: options.aggregateType ?? aggregateClass.name,
    topic: options.topic,
  }));
  const channels: Record<string, AsyncApiChannel> = {};
  const operations: Record<string, AsyncApiOperation> = {};
  const messages: Record<string, AsyncApiMessage> = {};
  const schemas: Record<string, JsonSchema> = { [HEADERS_SCHEMA]: headersSchema() };
  const channelIds = new Map<string, string>();
  for (const { eventClass, metadata } of events) {
    const messageId = componentKey(`${metadata.type}.v${metadata.version}`);
    const payload = (input.payloadSchemaOf ?? payloadSchemaOf)(eventClass);
    Object.assign(schemas, payload.referenced);
    const { destinations, byAggregate } = destinationsOfEvent(metadata, aggregates, input.settings);
    const notes = [...(metadata.version > 1 ? [olderVersions(metadata.version)] : []), ...(byAggregate ? [destinationByAggregate(byAggregate)] : []), ...(destinations.length === 0 ? [destinationAtRunTime(metadata.type)] : [])];
    messages[messageId] = {
      name: metadata.type,
      title: eventClass.name,
      summary: `${metadata.type}, version ${metadata.version}`,
      ...(notes.length > 0 ? { description: notes.join(' ') } : {}),
      contentType: 'application/json',
      headers: { $ref: `${SCHEMA_POINTER}${HEADERS_SCHEMA}` },
      payload: envelopeSchema(metadata, payload.schema),
      'x-outbox-event-type': metadata.type,
      'x-outbox-event-version': metadata.version,
    };
    for (const destination of destinations) {
      const channelId = channelIdOf(destination, channelIds);
      const channel = (channels[channelId] ??= channelOf(destination));
      channel.messages[messageId] = { $ref: `#/components/messages/${messageId}` };
      const operation = (operations[`send-${channelId}`] ??= { action: 'send', channel: { $ref: `#/channels/${channelId}` }, summary: `Events sent to "${destination.destination}".`, messages: [] });
      operation.messages.push({ $ref: `#/channels/${channelId}/messages/${messageId}` });
    }
  }
  const description = [input.info.description, events.length === 0 ? noDeclaredEvents() : runtimeOnly()].filter(Boolean).join('\n\n');
  return {
    asyncapi: '3.0.0',
    info: { ...input.info, description },
    defaultContentType: 'application/json',
    ...(input.servers ? { servers: input.servers } : {}),
    channels,
    operations,
    components: { messages, schemas },
  };
}

function channelOf({ transport, destination }: EventDestination): AsyncApiChannel {
  const on = transport === DEFAULT_TRANSPORT ? 'the default transport' : `the transport "${transport}" (routes)`;
  return { address: destination, title: destination, description: `Topic, queue or subject "${destination}" on ${on}.`, messages: {} };
}

// Ids are keys of the document (and parts of $ref pointers): letters, digits, "_" and "-" only, unique.
function channelIdOf({ transport, destination }: EventDestination, taken: Map<string, string>): string {
  const key = `${transport}\u0000${destination}`;
  const known = taken.get(key);
  if (known) return known;
  const base = (transport === DEFAULT_TRANSPORT ? destination : `${transport}-${destination}`).replace(/[^A-Za-z0-9_-]/g, '_');
  const used = new Set(taken.values());
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
  taken.set(key, id);
  return id;
}

function componentKey(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The body every transport sends: the envelope (core/outbox-message.ts `OutboxEnvelope`). */
function envelopeSchema(event: OutboxEventMetadata, payload: JsonSchema): JsonSchema {
  const text = { type: 'string' };
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

function headersSchema(): JsonSchema {
  const always = ['id', 'type', 'version', 'aggregateType', 'aggregateId', 'occurredAt'] as const;
  return {
    type: 'object',
    description: headersOnlyOnSomeBrokers(),
    required: always.map((key) => ENVELOPE_HEADERS[key]),
    properties: Object.fromEntries(Object.entries(ENVELOPE_HEADERS).map(([field, header]) => [header, { type: 'string', description: `The envelope's "${field}".` }])),
    additionalProperties: { type: 'string' },
  };
}
