import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { logLevel } from 'kafkajs';
import { ClientKafka, ClientProxyFactory, Transport, type KafkaOptions } from '@nestjs/microservices';
import { describeOutboxTransportContract, type OpenTransport } from '@nest-outbox/outbox/testing';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { kafkaTopicDestination } from '../support/kafka-topic.reader';
import { freePort } from '../support/free-port';
import { requireService } from '../support/services';
import { StreamRelayTransport } from './stream-relay.transport';

function kafkaTransport(brokers: string[], client: Partial<NonNullable<KafkaOptions['options']>['client']> = {}): OpenTransport {
  const proxy = ClientProxyFactory.create({
    transport: Transport.KAFKA,
    options: { client: { clientId: `contract-${randomBytes(4).toString('hex')}`, brokers, logLevel: logLevel.NOTHING, ...client }, producerOnlyMode: true, send: { acks: -1 } },
  }) as ClientKafka;
  return { transport: new ClientProxyTransport(proxy), close: () => proxy.close() };
}

const openTopic = () => kafkaTopicDestination(requireService('kafka').split(','), 'contract');

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
  unreachable: { createTransport: async () => kafkaTransport([`127.0.0.1:${await freePort()}`], { retry: { retries: 0 }, connectionTimeout: 500 }) },
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
