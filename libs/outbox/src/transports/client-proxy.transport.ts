import { lastValueFrom } from 'rxjs';
import { ClientKafka, ClientMqtt, ClientNats, ClientProxy, ClientRedis, ClientRMQ, ClientTCP } from '@nestjs/microservices';
import type { OutgoingMessage } from '../core/outbox-message';
import type { OutboxTransport } from '../core/outbox-transport.port';

/**
 * Publishes through any Nest microservice client. `emit` completes when the client has handed
 * the message over; for Kafka that is the broker's acknowledgement with the client's `acks`
 * setting (kafkajs defaults to -1, all in-sync replicas).
 */
export class ClientProxyTransport implements OutboxTransport {
  readonly name: string;

  constructor(
    private readonly client: ClientProxy,
    name?: string,
  ) {
    this.name = name ?? transportNameOf(client);
  }

  async publish(message: OutgoingMessage): Promise<void> {
    await lastValueFrom(this.client.emit(message.destination, this.recordFor(message)), { defaultValue: undefined });
  }

  private recordFor(message: OutgoingMessage): unknown {
    if (this.client instanceof ClientKafka) {
      // The aggregate id as key keeps one aggregate's events in one partition, hence in order.
      return { key: message.key, value: message.envelope, headers: message.headers };
    }
    return message.envelope;
  }
}

function transportNameOf(client: ClientProxy): string {
  if (client instanceof ClientKafka) return 'kafka';
  if (client instanceof ClientTCP) return 'tcp';
  if (client instanceof ClientRMQ) return 'rabbitmq';
  if (client instanceof ClientNats) return 'nats';
  if (client instanceof ClientRedis) return 'redis';
  if (client instanceof ClientMqtt) return 'mqtt';
  return client.constructor.name;
}
