import { randomBytes } from 'node:crypto';
import { ConfluentKafkaTransport, type ConfluentKafkaTransportOptions } from '@nest-outbox/outbox/kafka';
import { describeOutboxTransportContract, type OpenTransport } from '@nest-outbox/outbox/testing';
import { kafkaTopicDestination } from '../support/kafka-topic.reader';
import { freePort } from '../support/free-port';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

// ConfluentKafkaTransport (librdkafka through @confluentinc/kafka-javascript) on the Kafka-protocol
// test broker. Its native addon is built by "bash scripts/services.sh kafka-javascript" (npm test does
// it); without it every case fails with the error that says so. The broker outage through a relaying
// app: confluent-kafka.outage.e2e-spec.ts.

const brokers = () => requireService('kafka').split(',');

function confluentTransport(options: Partial<ConfluentKafkaTransportOptions> = {}): OpenTransport {
  const transport = new ConfluentKafkaTransport({ brokers: brokers(), clientId: `contract-${randomBytes(4).toString('hex')}`, ...options });
  return { transport, close: () => transport.close() };
}

describe('@confluentinc/kafka-javascript on the Kafka test broker', () => {
  it('loads with its librdkafka (built by "bash scripts/services.sh kafka-javascript")', () => {
    // A missing package or addon throws OutboxConfigurationError here, naming the command that builds it.
    const transport = new ConfluentKafkaTransport({ brokers: brokers() });
    expect(transport.name).toBe('kafka');
    const { librdkafkaVersion } = require('@confluentinc/kafka-javascript') as { librdkafkaVersion: string };
    expect(Number(librdkafkaVersion.split('.')[0])).toBeGreaterThanOrEqual(2);
  });

  it('gets an idempotent producer id from the test broker, and produces with sequence numbers', async () => {
    const { Producer } = require('@confluentinc/kafka-javascript') as {
      Producer: new (config: object) => {
        connect(options: object, callback: (error: unknown) => void): void;
        produce(topic: string, partition: null, value: Buffer, key: string): void;
        flush(timeoutMs: number, callback: (error: unknown) => void): void;
        disconnect(callback: () => void): void;
        on(event: 'event.log', listener: (log: { message: string }) => void): void;
        setPollInBackground(set: boolean): void;
      };
    };
    const logs: string[] = [];
    const producer = new Producer({ 'bootstrap.servers': brokers().join(','), 'enable.idempotence': true, acks: -1, debug: 'eos,msg', event_cb: true });
    producer.on('event.log', (log) => logs.push(log.message));
    await new Promise<void>((resolve, reject) => producer.connect({ timeout: 10_000 }, (error) => (error ? reject(error) : resolve())));
    try {
      producer.setPollInBackground(true);
      producer.produce(`idempotence-${randomBytes(5).toString('hex')}`, null, Buffer.from('{}'), 'k');
      await new Promise<void>((resolve, reject) => producer.flush(10_000, (error) => (error ? reject(error) : resolve())));
      await waitFor('a produced message set with a producer id', () => logs.some((line) => /Produce MessageSet .*BaseSeq 0, PID\{Id:\d+/.test(line)), 10_000);
      expect(logs.some((line) => line.includes('Idempotent producer state change WaitPID -> Assigned'))).toBe(true);
    } finally {
      await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
    }
  });
});

describeOutboxTransportContract({
  name: 'ConfluentKafkaTransport',
  createTransport: async () => confluentTransport(),
  openDestination: () => kafkaTopicDestination(brokers(), 'contract-ckjs'),
  batching: 'keeps-key-order',
  carries: { key: true, headers: true },
  unreachable: { createTransport: async () => confluentTransport({ brokers: [`127.0.0.1:${await freePort()}`], connectTimeoutMs: 1_000, deliveryTimeoutMs: 1_000, closeTimeoutMs: 0 }) },
  waitMs: 20_000,
});
