import { formatOf, type EnvelopeFormat } from '../cloudevents/envelope-options';
import { DEFAULT_TRANSPORT } from '../outbox-options';
import { declaredAggregates, declaredEvents, type OutboxEventMetadata, type PublishesEventsOptions } from '../event-metadata';
import type { AsyncApiChannel, AsyncApiDocument, AsyncApiMessage, AsyncApiOperation, JsonSchema } from './asyncapi-document.types';
import type { ResolvedAsyncApiOptions } from './asyncapi-options';
import { destinationAtRunTime, destinationByAggregate, noDeclaredEvents, olderVersions, runtimeOnly } from './asyncapi.messages';
import { destinationsOfEvent, type DeclaredAggregate, type DestinationSettings, type EventDestination } from './event-destinations';
import { CLOUD_EVENTS_HEADERS_SCHEMA, cloudEventsHeadersSchema, HEADERS_SCHEMA, messageKey, messageOf, outboxHeadersSchema } from './message-shapes';
import { payloadSchemaOf, type PayloadSchema } from './payload-schema';

export interface AsyncApiInput extends ResolvedAsyncApiOptions {
  settings: DestinationSettings;
  /** Default: every class declared with `@OutboxEvent` in this process. */
  events?: { eventClass: Function; metadata: OutboxEventMetadata }[];
  /** Default: every class declared with `@PublishesEvents` in this process. */
  aggregates?: { aggregateClass: Function; options: PublishesEventsOptions }[];
  /** Default: from class-validator's decorators (see payload-schema.ts). */
  payloadSchemaOf?: (eventClass: Function) => PayloadSchema;
  /** With `schemaRegistry`: the subjects an event type's schema has on its destinations, `undefined` for an event without one. */
  registeredSchemaOf?: (type: string, destinations: readonly string[]) => RegisteredSchemaReference | undefined;
}

/** Where a consumer finds an event's schema in the Schema Registry. */
export interface RegisteredSchemaReference {
  format: 'avro' | 'protobuf' | 'json';
  /** One per destination with TopicNameStrategy, one for all with RecordNameStrategy. */
  subjects: string[];
  /** Kafka message binding's `schemaLookupStrategy` (AsyncAPI Kafka bindings 0.5.0). */
  lookupStrategy: 'TopicIdStrategy' | 'RecordIdStrategy' | 'TopicRecordIdStrategy';
}

/**
 * The AsyncAPI 3.0.0 document of what the app publishes: a channel per destination its declared
 * events go to, a `send` operation per channel, a message per event type (its current version) in
 * each format its destinations use (`envelope` option): the outbox envelope, or a CloudEvent.
 */
export function buildAsyncApiDocument(input: AsyncApiInput): AsyncApiDocument {
  const events = [...(input.events ?? declaredEvents())].sort((a, b) => a.metadata.type.localeCompare(b.metadata.type));
  const aggregates: DeclaredAggregate[] = (input.aggregates ?? declaredAggregates()).map(({ aggregateClass, options }) => ({
    aggregateType: options.aggregateType ?? aggregateClass.name,
    topic: options.topic,
  }));
  const envelope = input.settings.envelope ?? { format: 'outbox', headers: 'all', destinations: {} };
  const channels: Record<string, AsyncApiChannel> = {};
  const operations: Record<string, AsyncApiOperation> = {};
  const messages: Record<string, AsyncApiMessage> = {};
  const schemas: Record<string, JsonSchema> = {};
  const channelIds = new Map<string, string>();
  for (const { eventClass, metadata } of events) {
    const payload = (input.payloadSchemaOf ?? payloadSchemaOf)(eventClass);
    Object.assign(schemas, payload.referenced);
    const { destinations, byAggregate } = destinationsOfEvent(metadata, aggregates, input.settings);
    const notes = [...(metadata.version > 1 ? [olderVersions(metadata.version)] : []), ...(byAggregate ? [destinationByAggregate(byAggregate)] : [])];
    const add = (format: EnvelopeFormat, extra: string[] = []) => {
      const key = messageKey(metadata, format);
      messages[key] ??= messageOf(metadata, eventClass.name, format, payload.schema, envelope.source, [...notes, ...extra]);
      return key;
    };
    if (destinations.length === 0) add(envelope.format, [destinationAtRunTime(metadata.type)]);
    const registered = input.registeredSchemaOf?.(metadata.type, destinations.map(({ destination }) => destination));
    for (const destination of destinations) {
      const messageId = add(formatOf(envelope, destination.destination));
      if (registered) referenceRegisteredSchema(messages[messageId], registered);
      const channelId = channelIdOf(destination, channelIds);
      const channel = (channels[channelId] ??= channelOf(destination));
      channel.messages[messageId] = { $ref: `#/components/messages/${messageId}` };
      const operation = (operations[`send-${channelId}`] ??= { action: 'send', channel: { $ref: `#/channels/${channelId}` }, summary: `Events sent to "${destination.destination}".`, messages: [] });
      operation.messages.push({ $ref: `#/channels/${channelId}/messages/${messageId}` });
    }
  }
  // Only the headers some message points to.
  const used = JSON.stringify(messages);
  if (used.includes(`/${HEADERS_SCHEMA}"`)) schemas[HEADERS_SCHEMA] = outboxHeadersSchema(envelope.headers);
  if (used.includes(`/${CLOUD_EVENTS_HEADERS_SCHEMA}"`)) schemas[CLOUD_EVENTS_HEADERS_SCHEMA] = cloudEventsHeadersSchema();
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

/**
 * On Kafka the value is the payload in the Confluent wire format, its schema in the registry: the
 * Kafka message binding says where the id is and how subjects are named, `x-schema-registry` which
 * subjects. The JSON Schema of the payload stays, as what the app writes.
 */
function referenceRegisteredSchema(message: AsyncApiMessage, registered: RegisteredSchemaReference): void {
  const contentType = { avro: 'application/vnd.apache.avro+binary', protobuf: 'application/x-protobuf', json: 'application/json' }[registered.format];
  message.bindings = { kafka: { schemaIdLocation: 'payload', schemaIdPayloadEncoding: 'confluent', schemaLookupStrategy: registered.lookupStrategy, bindingVersion: '0.5.0' } };
  message['x-schema-registry'] = { format: registered.format, subjects: registered.subjects, contentType };
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
