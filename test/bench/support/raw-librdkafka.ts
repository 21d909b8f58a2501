import { CONFLUENT_KAFKA_DEFAULTS } from './outbox';

interface RawProducer {
  connect(options: { timeout: number }, callback: (error: unknown) => void): void;
  setPollInBackground(set: boolean): void;
  produce(topic: string, partition: null, value: Buffer, key: string, timestamp: null, opaque: unknown, headers: Array<Record<string, string>>): void;
  on(event: 'delivery-report', listener: (error: Error | null, report: { opaque: unknown }) => void): void;
  disconnect(timeoutMs: number, callback: () => void): void;
}

interface Lane {
  left: number;
  failed?: Error;
  done(): void;
}

/** The records the library's Kafka transports send (see `recordOfRow`). */
export interface RawRecord {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * A plain `@confluentinc/kafka-javascript` producer (no outbox code) with the settings
 * ConfluentKafkaTransport uses (acks all, idempotent, 5 requests in flight per connection, its
 * linger), sending `records` from memory in batches of `batchSize`, `inFlight` batches at a time,
 * each batch done when every delivery report is in. Returns msg/s, the first warm-up send excluded.
 */
export async function rawLibrdkafkaRun(brokers: string[], topic: string, records: RawRecord[], batchSize: number, inFlight: number): Promise<number> {
  const { Producer } = require('@confluentinc/kafka-javascript') as { Producer: new (config: object) => RawProducer };
  const producer = new Producer({
    'bootstrap.servers': brokers.join(','),
    'client.id': 'bench-raw-librdkafka',
    acks: -1,
    'enable.idempotence': true,
    'max.in.flight.requests.per.connection': 5,
    'linger.ms': CONFLUENT_KAFKA_DEFAULTS.lingerMs,
    'socket.nagle.disable': true,
    dr_cb: true,
  });
  producer.on('delivery-report', (error, report) => {
    const lane = report.opaque as Lane;
    if (error) lane.failed = error;
    if (--lane.left === 0) lane.done();
  });
  await new Promise<void>((resolve, reject) => producer.connect({ timeout: 10_000 }, (error) => (error ? reject(error) : resolve())));
  producer.setPollInBackground(true);
  const send = (batch: RawRecord[]) =>
    new Promise<void>((resolve, reject) => {
      const lane: Lane = { left: batch.length, done: () => (lane.failed ? reject(lane.failed) : resolve()) };
      for (const record of batch) {
        producer.produce(topic, null, Buffer.from(record.value), record.key, null, lane, Object.entries(record.headers).map(([name, value]) => ({ [name]: value })));
      }
    });
  try {
    await send([{ key: '__warmup', value: '{}', headers: {} }]);
    let next = 0;
    const started = performance.now();
    const lane = async () => {
      while (next < records.length) {
        const from = next;
        next += batchSize;
        await send(records.slice(from, from + batchSize));
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    return records.length / ((performance.now() - started) / 1000);
  } finally {
    await new Promise<void>((resolve) => producer.disconnect(5_000, () => resolve()));
  }
}
