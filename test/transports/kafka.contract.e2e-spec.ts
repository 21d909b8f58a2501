import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { logLevel } from 'kafkajs';
import { ClientKafka, ClientProxyFactory, Transport, type KafkaOptions } from '@nestjs/microservices';
import type { OutboxEnvelope } from '@nest-outbox/outbox';
import { describeOutboxTransportContract, type OpenTransport } from '@nest-outbox/outbox/testing';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';

/** A loopback port nothing listens on: a broker address that refuses connections. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function kafkaTransport(brokers: string[], client: Partial<NonNullable<KafkaOptions['options']>['client']> = {}): OpenTransport {
  const proxy = ClientProxyFactory.create({
    transport: Transport.KAFKA,
    options: { client: { clientId: `contract-${randomBytes(4).toString('hex')}`, brokers, logLevel: logLevel.NOTHING, ...client }, producerOnlyMode: true, send: { acks: -1 } },
  }) as ClientKafka;
  return { transport: new ClientProxyTransport(proxy), close: () => proxy.close() };
}

// The library's ClientProxyTransport over Nest's Kafka client, on the Kafka-protocol test broker.
describeOutboxTransportContract({
  name: 'ClientProxyTransport over ClientKafka',
  createTransport: async () => kafkaTransport(requireService('kafka').split(',')),
  openDestination: async () => {
    const topic = `contract-${randomBytes(5).toString('hex')}`;
    const reader = new KafkaTopicReader(requireService('kafka').split(','), topic);
    await reader.start();
    return {
      name: topic,
      received: async () => reader.records.map((record) => ({ envelope: record.value as unknown as OutboxEnvelope, key: record.key, headers: record.headers })),
      close: () => reader.stop(),
    };
  },
  batching: 'keeps-key-order',
  carries: { key: true, headers: true },
  // One attempt, short connection timeout: the refused connection fails the publish at once.
  unreachable: { createTransport: async () => kafkaTransport([`127.0.0.1:${await closedPort()}`], { retry: { retries: 0 }, connectionTimeout: 500 }) },
  waitMs: 20_000,
});
