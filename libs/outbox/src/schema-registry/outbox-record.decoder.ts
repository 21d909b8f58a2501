import { ENVELOPE_HEADERS } from '../core/envelope';
import type { OutboxEnvelope } from '../core/outbox-message';
import type { SchemaFormat } from '../core/schema-registry/event-schema';
import type { SchemaRegistryClientLike } from '../core/schema-registry/schema-registry.options';
import { notAnOutboxRecord } from '../core/schema-registry/schema-registry.messages';
import { OutboxNonRetryableError } from '../core/outbox.errors';
import { loadSchemaRegistry, type SchemaRegistryPeer, type WireDeserializer } from './schema-registry.peer';

/** A Kafka record as kafkajs, @confluentinc/kafka-javascript or a Nest `KafkaContext` (`getMessage()`, with `keepBinary`) hands it. */
export interface ReceivedKafkaRecord {
  value: Buffer | null;
  headers?: Record<string, Buffer | string | Array<Buffer | string> | undefined>;
}

const FORMAT_OF: Record<string, SchemaFormat> = { AVRO: 'avro', PROTOBUF: 'protobuf', JSON: 'json' };
const ENVELOPE_HEADER_NAMES = new Set<string>(Object.values(ENVELOPE_HEADERS));

/**
 * Reads a record the outbox published with `schemaRegistry` back into its envelope, for the inbox
 * (`OutboxInbox.process(envelope, …)`) and typed consumers (`toOutboxEvent(Class, envelope)`):
 * the payload decoded by the registry client's deserializer (the schema found by the id in the
 * record), the envelope's fields from the headers. A record in the outbox's JSON envelope (an event
 * without a schema) is read as it is.
 */
export class OutboxRecordDecoder {
  private readonly deserializers = new Map<SchemaFormat, WireDeserializer>();

  constructor(
    private readonly client: SchemaRegistryClientLike & { getBySubjectAndId(subject: string, id: number): Promise<{ schemaType?: string }> },
    private readonly peer: SchemaRegistryPeer = loadSchemaRegistry(),
  ) {}

  async decode(topic: string, record: ReceivedKafkaRecord): Promise<OutboxEnvelope> {
    const value = record.value;
    const headers = textHeaders(record.headers);
    if (!value || value.length < 5 || value[0] !== 0) return JSON.parse(value?.toString() ?? 'null') as OutboxEnvelope;
    const id = headers[ENVELOPE_HEADERS.id];
    const type = headers[ENVELOPE_HEADERS.type];
    if (id === undefined || type === undefined) throw new OutboxNonRetryableError(notAnOutboxRecord(topic));
    const { schemaType } = await this.client.getBySubjectAndId('', value.readInt32BE(1));
    const format = FORMAT_OF[(schemaType ?? 'AVRO').toUpperCase()] ?? 'avro';
    const payload = await this.deserializer(format).deserialize(topic, value);
    const envelope: OutboxEnvelope = {
      id,
      type,
      version: Number(headers[ENVELOPE_HEADERS.version] ?? 1),
      aggregateType: headers[ENVELOPE_HEADERS.aggregateType] ?? '',
      aggregateId: headers[ENVELOPE_HEADERS.aggregateId] ?? '',
      occurredAt: headers[ENVELOPE_HEADERS.occurredAt] ?? '',
      headers: Object.fromEntries(Object.entries(headers).filter(([name]) => !ENVELOPE_HEADER_NAMES.has(name))),
      payload,
    };
    if (headers[ENVELOPE_HEADERS.correlationId]) envelope.correlationId = headers[ENVELOPE_HEADERS.correlationId];
    if (headers[ENVELOPE_HEADERS.causationId]) envelope.causationId = headers[ENVELOPE_HEADERS.causationId];
    if (headers[ENVELOPE_HEADERS.tenantId]) envelope.tenantId = headers[ENVELOPE_HEADERS.tenantId];
    return envelope;
  }

  private deserializer(format: SchemaFormat): WireDeserializer {
    let deserializer = this.deserializers.get(format);
    if (!deserializer) this.deserializers.set(format, (deserializer = this.peer.newDeserializer(format, this.client)));
    return deserializer;
  }
}

function textHeaders(headers: ReceivedKafkaRecord['headers']): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const one = Array.isArray(value) ? value[value.length - 1] : value;
    if (one !== undefined) text[name] = one.toString();
  }
  return text;
}
