import { lastValueFrom } from 'rxjs';
import { ClientKafka, type ClientProxy } from '@nestjs/microservices';

/** Any Nest client: each one narrows ClientProxy's event and status types differently. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyClientProxy = ClientProxy<any, any>;
import type { EnvelopeFormat } from '../core/cloudevents/envelope-options';
import type { OutgoingMessage } from '../core/outbox-message';
import type { Acknowledgement, OutboxTransport } from '../core/outbox-transport.port';
import { profileOf, type ClientProfile } from './client-profiles';
import { fetchKafkaTopicMetadata, publishKafkaBatch } from './kafka-batch';

/**
 * Publishes through any Nest microservice client. `emit` completes when the client has handed
 * the message over; what that guarantees depends on the client (see `acknowledgement`). Kafka
 * batches go out with one produce request per topic.
 */
export class ClientProxyTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement: Acknowledgement;
  readonly acknowledgementNote?: string;
  readonly envelopeFormats: readonly EnvelopeFormat[];
  readonly encodedBodies: boolean;
  readonly publishBatch?: (messages: OutgoingMessage[]) => Promise<Array<Error | undefined>>;
  readonly keepsKeyOrderInBatch: boolean = false;
  private readonly profile: ClientProfile;

  constructor(
    private readonly client: AnyClientProxy,
    name?: string,
  ) {
    this.profile = profileOf(client);
    this.name = name ?? this.profile.name;
    this.acknowledgement = this.profile.acknowledgement;
    this.acknowledgementNote = this.profile.acknowledgementNote;
    this.envelopeFormats = this.profile.envelopeFormats;
    this.encodedBodies = this.profile.encodedBodies === true;
    if (client instanceof ClientKafka) {
      this.publishBatch = (messages) => publishKafkaBatch(client, messages);
      // One produce call per topic: a key's messages land on one partition, in the order given.
      this.keepsKeyOrderInBatch = true;
    }
  }

  async connect(destinations: readonly string[] = []): Promise<void> {
    await this.client.connect();
    if (this.client instanceof ClientKafka && destinations.length > 0) await fetchKafkaTopicMetadata(this.client, destinations);
  }

  async publish(message: OutgoingMessage): Promise<void> {
    await lastValueFrom(this.client.emit(message.destination, this.profile.toRecord(message)), { defaultValue: undefined });
  }
}
