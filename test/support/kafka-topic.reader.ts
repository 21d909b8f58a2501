import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import type { OutboxEnvelope } from '@nest-outbox/outbox';
import type { BrokerDestination } from '@nest-outbox/outbox/testing';

export interface ConsumedRecord {
  key: string | undefined;
  headers: Record<string, string>;
  value: Record<string, unknown>;
  partition: number;
  /** The producer id of the record's batch: '-1' unless an idempotent or transactional producer wrote it. */
  producerId: string | undefined;
}

/** kafkajs decodes each record's batch header into `batchContext` but leaves it out of its types. */
interface WithBatchContext {
  batchContext?: { producerId?: string };
}

/** An independent kafkajs consumer that reads a topic from the beginning, for assertions. */
export class KafkaTopicReader {
  readonly records: ConsumedRecord[] = [];
  private consumer: Consumer | undefined;

  constructor(
    private readonly brokers: string[],
    private readonly topic: string,
  ) {}

  async start(): Promise<void> {
    const kafka = new Kafka({ clientId: `reader-${randomBytes(3).toString('hex')}`, brokers: this.brokers, logLevel: logLevel.NOTHING });
    this.consumer = kafka.consumer({ groupId: `reader-${randomBytes(5).toString('hex')}`, allowAutoTopicCreation: true, maxWaitTimeInMs: 100, sessionTimeout: 6_000, rebalanceTimeout: 6_000, heartbeatInterval: 1_000 });
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message, partition }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) if (value !== undefined) headers[name] = value.toString();
        this.records.push({ key: message.key?.toString(), headers, value: JSON.parse(message.value?.toString() ?? 'null'), partition, producerId: (message as WithBatchContext).batchContext?.producerId });
      },
    });
  }

  forKey(key: string): ConsumedRecord[] {
    return this.records.filter((record) => record.key === key);
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}

/** A fresh topic (`prefix-<random>`) and a reader of it, as the transport contract's destination. */
export async function kafkaTopicDestination(brokers: string[], prefix: string): Promise<BrokerDestination> {
  const topic = `${prefix}-${randomBytes(5).toString('hex')}`;
  const reader = new KafkaTopicReader(brokers, topic);
  await reader.start();
  return {
    name: topic,
    received: async () => reader.records.map((record) => ({ envelope: record.value as unknown as OutboxEnvelope, key: record.key, headers: record.headers })),
    close: () => reader.stop(),
  };
}
