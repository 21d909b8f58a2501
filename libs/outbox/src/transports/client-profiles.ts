import { ClientKafka, ClientMqtt, ClientNats, ClientRedis, ClientRMQ, ClientTCP, MqttRecord, RmqRecord } from '@nestjs/microservices';
import type { EnvelopeFormat } from '../core/cloudevents/envelope-options';
import { bodyOf, type OutgoingMessage } from '../core/outbox-message';
import type { Acknowledgement } from '../core/outbox-transport.port';
import { natsRecordFor } from './nats-headers';

/** How the outbox talks to one kind of Nest client: what it sends, and what "published" means there. */
export interface ClientProfile {
  name: string;
  acknowledgement: Acknowledgement;
  acknowledgementNote?: string;
  /** Kafka carries binary CloudEvents (ce_* headers); every other Nest client wraps the body in its packet, so structured only. */
  envelopeFormats: readonly EnvelopeFormat[];
  /** Kafka sends `OutgoingMessage.encoded` (a Schema Registry wire format) as the record's value. */
  encodedBodies?: boolean;
  toRecord(message: OutgoingMessage): unknown;
}

const ALL_FORMATS: readonly EnvelopeFormat[] = ['outbox', 'cloudevents-binary', 'cloudevents-structured'];
const STRUCTURED_ONLY: readonly EnvelopeFormat[] = ['outbox', 'cloudevents-structured'];

type ClientOptions = { send?: { acks?: number }; qos?: number };

// Nest keeps a client's options protected; the outbox only reads them to report what an ack means.
const optionsOf = (client: object): ClientOptions => (Reflect.get(client, 'options') as ClientOptions | undefined) ?? {};

export function profileOf(client: object): ClientProfile {
  if (client instanceof ClientKafka) {
    const acks = optionsOf(client).send?.acks ?? -1;
    return {
      name: 'kafka',
      acknowledgement: acks === 0 ? 'none' : 'broker',
      acknowledgementNote: acks === 0 ? 'the client sends with acks: 0' : undefined,
      envelopeFormats: ALL_FORMATS,
      encodedBodies: true,
      // The aggregate id as key keeps one aggregate's events in one partition, hence in order.
      // A CloudEvents body goes as JSON text: Nest would send a bare string payload unquoted.
      toRecord: (message) => ({ key: message.key, value: message.encoded ?? (message.body !== undefined ? JSON.stringify(message.body) : message.envelope), headers: message.headers }),
    };
  }
  if (client instanceof ClientRMQ) {
    return {
      name: 'rabbitmq',
      // Nest publishes over a confirm channel: the callback fires on the broker's publisher confirm.
      acknowledgement: 'broker',
      envelopeFormats: STRUCTURED_ONLY,
      toRecord: (message) =>
        new RmqRecord(bodyOf(message), {
          messageId: message.envelope.id,
          type: message.envelope.type,
          // AMQP 0-9-1 timestamps are POSIX seconds (spec 4.2.5.4); milliseconds read as year ~57000 elsewhere.
          timestamp: Math.floor(Date.parse(message.envelope.occurredAt) / 1000),
          // A structured CloudEvent says application/cloudevents+json, in its headers.
          contentType: (message.body !== undefined ? message.headers['content-type'] : undefined) ?? 'application/json',
          persistent: true,
          headers: { ...message.headers, 'outbox-key': message.key },
        }),
    };
  }
  if (client instanceof ClientMqtt) {
    return {
      name: 'mqtt',
      // QoS 1: the publish callback fires on the broker's PUBACK.
      acknowledgement: 'broker',
      envelopeFormats: STRUCTURED_ONLY,
      toRecord: (message) =>
        new MqttRecord(bodyOf(message), { qos: 1, properties: { userProperties: { ...message.headers, 'outbox-key': message.key } } }),
    };
  }
  if (client instanceof ClientNats) {
    return {
      name: 'nats',
      acknowledgement: 'none',
      acknowledgementNote: 'core NATS publishes are fire-and-forget; use JetStreamTransport for acknowledged publishes',
      envelopeFormats: STRUCTURED_ONLY,
      toRecord: (message) => natsRecordFor(message),
    };
  }
  if (client instanceof ClientRedis) {
    return { name: 'redis', acknowledgement: 'none', acknowledgementNote: 'Redis pub/sub keeps nothing for absent subscribers', envelopeFormats: STRUCTURED_ONLY, toRecord: bodyOf };
  }
  if (client instanceof ClientTCP) {
    return { name: 'tcp', acknowledgement: 'none', acknowledgementNote: 'TCP events are only written to the socket', envelopeFormats: STRUCTURED_ONLY, toRecord: bodyOf };
  }
  return { name: client.constructor.name, acknowledgement: 'broker', envelopeFormats: STRUCTURED_ONLY, toRecord: bodyOf };
}
