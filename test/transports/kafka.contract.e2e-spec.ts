import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { logLevel } from 'kafkajs';
import { ClientKafka, ClientProxyFactory, Transport, type KafkaOptions } from '@nestjs/microservices';
import type { OutboxEnvelope } from '@nest-outbox/outbox';
import { describeOutboxTransportContract, type BrokerDestination, type OpenTransport } from '@nest-outbox/outbox/testing';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { StreamRelayTransport } from './stream-relay.transport';

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

async function openTopic(): Promise<BrokerDestination> {
  const topic = `contract-${randomBytes(5).toString('hex')}`;
  const reader = new KafkaTopicReader(requireService('kafka').split(','), topic);
  await reader.start();
  return {
    name: topic,
    received: async () => reader.records.map((record) => ({ envelope: record.value as unknown as OutboxEnvelope, key: record.key, headers: record.headers })),
    close: () => reader.stop(),
  };
}

/** `scripts/services.sh kafka-down` / `kafka-up` on the services this run uses: the broker refuses connections, then accepts them. */
function brokers(command: 'kafka-down' | 'kafka-up'): void {
  execFileSync('bash', ['scripts/services.sh', command], { cwd: join(__dirname, '..', '..'), env: process.env, stdio: ['ignore', 'ignore', 'inherit'] });
}

// The library's ClientProxyTransport over Nest's Kafka client, on the Kafka-protocol test broker.
describeOutboxTransportContract({
  name: 'ClientProxyTransport over ClientKafka',
  createTransport: async () => kafkaTransport(requireService('kafka').split(',')),
  openDestination: openTopic,
  batching: 'keeps-key-order',
  carries: { key: true, headers: true },
  // One attempt, short connection timeout: the refused connection fails the publish at once.
  unreachable: { createTransport: async () => kafkaTransport([`127.0.0.1:${await closedPort()}`], { retry: { retries: 0 }, connectionTimeout: 500 }) },
  waitMs: 20_000,
});

// The WAL mode's publish path through the same transport: the stream relay, which resolves a commit
// only once it confirms it after the broker's acknowledgement. Unreachable: the test broker stopped
// (kafka-down), so this file runs only on services of its own (see common test rules).
describeOutboxTransportContract({
  name: 'StreamRelay (WAL mode) over ClientKafka',
  createTransport: async () => {
    const open = kafkaTransport(requireService('kafka').split(','));
    const transport = new StreamRelayTransport(open.transport, 5_000);
    return { transport, close: () => transport.close() };
  },
  openDestination: openTopic,
  batching: 'keeps-key-order',
  carries: { key: true, headers: true },
  unreachable: {
    createTransport: async () => {
      brokers('kafka-down');
      const open = kafkaTransport(requireService('kafka').split(','), { retry: { retries: 0 }, connectionTimeout: 500 });
      const transport = new StreamRelayTransport(open.transport, 1_000);
      return {
        transport,
        close: async () => {
          try {
            await transport.close();
          } finally {
            brokers('kafka-up');
          }
        },
      };
    },
  },
  waitMs: 20_000,
});
