import type { EnvelopeFormat } from '../core/cloudevents/envelope-options';
import type { OutgoingMessage } from '../core/outbox-message';
import type { Acknowledgement, OutboxTransport } from '../core/outbox-transport.port';
import { publishShapedBatch } from '../core/shaped-batch';
import type { OutboxSchemas } from './outbox-schemas';

/**
 * Encodes the payload of each event that has a schema in the Confluent wire format (the registry
 * client's own serializer) on its way to a transport that sends such bodies (Kafka); the envelope's
 * fields travel in the headers, as always. Events without a schema pass through as JSON. A message
 * that cannot be encoded fails alone, for good when it never could be.
 */
export class SchemaRegistryTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement?: Acknowledgement;
  readonly acknowledgementNote?: string;
  readonly keepsKeyOrderInBatch?: boolean;
  readonly envelopeFormats?: readonly EnvelopeFormat[];
  readonly encodedBodies = true;
  readonly publishBatch?: (messages: OutgoingMessage[]) => Promise<Array<Error | undefined>>;

  constructor(
    private readonly inner: OutboxTransport,
    private readonly schemas: OutboxSchemas,
  ) {
    this.name = inner.name;
    this.acknowledgement = inner.acknowledgement;
    this.acknowledgementNote = inner.acknowledgementNote;
    this.keepsKeyOrderInBatch = inner.keepsKeyOrderInBatch;
    this.envelopeFormats = inner.envelopeFormats;
    if (inner.publishBatch) this.publishBatch = (messages) => this.publishEncodedBatch(messages);
  }

  async connect(destinations?: readonly string[]): Promise<void> {
    await this.inner.connect?.(destinations);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }

  async publish(message: OutgoingMessage): Promise<void> {
    await this.inner.publish(await this.encode(message));
  }

  private async publishEncodedBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    const shaped = await Promise.all(messages.map((message) => this.encode(message).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))));
    return publishShapedBatch(messages, shaped, (sendable) => this.inner.publishBatch!(sendable));
  }

  private async encode(message: OutgoingMessage): Promise<OutgoingMessage> {
    const encoded = await this.schemas.encode(message);
    return encoded === undefined ? message : { ...message, encoded };
  }
}

/** The transports as the relay uses them: those that send encoded bodies wrapped to encode; the others unchanged. */
export function withSchemaRegistry(transports: Map<string, OutboxTransport>, schemas: OutboxSchemas | null): Map<string, OutboxTransport> {
  if (!schemas) return transports;
  return new Map([...transports].map(([name, transport]) => [name, transport.encodedBodies ? new SchemaRegistryTransport(transport, schemas) : transport]));
}
