import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import { BATCH_HEADER, RELAY_HEADER } from './chaos.protocol';

/** One record on the topic. Records are kept by partition and offset, so a re-read after a consumer restart is not a duplicate. */
export interface Delivery {
  partition: number;
  offset: string;
  id: string;
  key: string;
  type: string;
  /** Which relay incarnation and which of its batches sent this copy. */
  relay: string;
  batch: string;
  consumedAt: number;
}

/**
 * The consumer ledger: a kafkajs consumer (own group, from the beginning) that keeps every record
 * of the run's topic. It survives the broker outage by kafkajs' own restart of a crashed consumer.
 */
export class KafkaLedger {
  private readonly byOffset = new Map<string, Delivery>();
  readonly malformed: string[] = [];
  readonly events: string[] = [];
  private consumer: Consumer | undefined;
  private admin: Admin | undefined;
  private readonly kafka: Kafka;

  constructor(
    brokers: string[],
    private readonly topic: string,
    private readonly log: (line: string) => void,
  ) {
    this.kafka = new Kafka({ clientId: `chaos-ledger-${randomBytes(3).toString('hex')}`, brokers, logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 3_000 } });
  }

  async start(): Promise<void> {
    this.admin = this.kafka.admin();
    await this.admin.connect();
    this.consumer = await subscribedFromTheStart(this.kafka, 'ledger', this.topic, this.log);
    await this.consumer.run({
      eachMessage: async ({ message, partition }) => {
        const where = `${partition}:${message.offset}`;
        if (this.byOffset.has(where)) return;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) if (value !== undefined) headers[name] = value.toString();
        let body: { id?: string; type?: string; aggregateId?: string } = {};
        try {
          body = JSON.parse(message.value?.toString() ?? 'null') ?? {};
        } catch {
          this.malformed.push(`${where}: value is not JSON`);
        }
        const id = headers['outbox-message-id'] ?? body.id ?? '';
        const key = message.key?.toString() ?? '';
        if (!id || body.id !== id || body.aggregateId !== key) this.malformed.push(`${where}: id/key mismatch (header ${id}, body ${body.id}, key ${key}, aggregate ${body.aggregateId})`);
        this.byOffset.set(where, {
          partition,
          offset: message.offset,
          id,
          key,
          type: headers['outbox-event-type'] ?? body.type ?? '',
          relay: headers[RELAY_HEADER] ?? '?',
          batch: headers[BATCH_HEADER] ?? '?',
          consumedAt: Date.now(),
        });
      },
    });
  }

  deliveries(): Delivery[] {
    return [...this.byOffset.values()].sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
  }

  get count(): number {
    return this.byOffset.size;
  }

  /**
   * Whether every record up to each partition's high watermark has been consumed. Records are
   * counted per partition; the mock never compacts, so offsets are dense.
   */
  async caughtUp(): Promise<{ caughtUp: boolean; behind: number }> {
    const offsets = await this.admin!.fetchTopicOffsets(this.topic);
    const consumed = new Map<number, number>();
    for (const delivery of this.byOffset.values()) consumed.set(delivery.partition, (consumed.get(delivery.partition) ?? 0) + 1);
    let behind = 0;
    for (const { partition, high, low } of offsets) behind += Math.max(0, Number(high) - Number(low) - (consumed.get(partition) ?? 0));
    return { caughtUp: behind === 0, behind };
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
  }
}

/**
 * A consumer of the run's topic from its first record, in a group of its own, that rides out the
 * broker outage: kafkajs restarts it after a crash (logged), with short session and rebalance times.
 */
export async function subscribedFromTheStart(kafka: Kafka, role: string, topic: string, log: (line: string) => void): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: `chaos-${role}-${randomBytes(5).toString('hex')}`,
    allowAutoTopicCreation: true,
    maxWaitTimeInMs: 200,
    sessionTimeout: 6_000,
    rebalanceTimeout: 6_000,
    heartbeatInterval: 1_000,
    retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 3_000 },
  });
  consumer.on(consumer.events.CRASH, (event) => log(`${role} consumer crashed (${event.payload.error?.message}); restart: ${event.payload.restart}`));
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  return consumer;
}
