import { benchServices, connectedProducer, suffix, warmTopic } from './support/env';
import { fmt } from './support/stats';

/**
 * Two facts about a plain `@confluentinc/kafka-javascript` producer (no library code), against the
 * Kafka test broker, behind what BENCHMARKS.md says of the WAL stream through librdkafka:
 *
 * - the first batch after connecting: with the idempotent producer, it can wait for librdkafka's
 *   500 ms producer-id retry (or ~50 ms for the named broker's connection) unless a brokers-only
 *   metadata request follows the connection (what `ConfluentKafkaTransport.connect()` does); STARTS
 *   fresh producers each way, each to a topic that exists;
 * - the time of one `produce()` call on the event loop's thread, by number of headers (the outbox
 *   sends six), with a 645-byte value: the binding reads each header object through V8's API.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/librdkafka-produce.js
 */
const STARTS = Number(process.env.STARTS ?? 12);
const CALLS = 30_000;

interface Producer {
  connect(options: { timeout: number }, callback: (error: unknown) => void): void;
  getMetadata(options: { allTopics: boolean; timeout: number }, callback: (error: unknown) => void): void;
  setPollInBackground(set: boolean): void;
  produce(topic: string, partition: null, value: Buffer, key: string, timestamp: null, opaque: unknown, headers?: Array<Record<string, string>>): void;
  on(event: 'delivery-report', listener: () => void): void;
  disconnect(timeoutMs: number, callback: () => void): void;
}

const HEADERS: Array<Record<string, string>> = [
  { 'outbox-message-id': '0193a1c4-6f1e-7c2a-9b3d-4e5f60718293' },
  { 'outbox-event-type': 'bench.parcel-registered' },
  { 'outbox-event-version': '1' },
  { 'outbox-aggregate-type': 'parcel' },
  { 'outbox-aggregate-id': '8d3e1a4c-1111-2222-3333-444455556666' },
  { 'outbox-occurred-at': '2026-11-26T18:00:00.000Z' },
];

async function main(): Promise<void> {
  const { kafkaBrokers } = benchServices();
  const brokers = kafkaBrokers.join(',');
  const { Producer } = require('@confluentinc/kafka-javascript') as { Producer: new (config: object) => Producer };
  let delivered = 0;
  const open = async (metadataFirst: boolean) => {
    const producer = new Producer({ 'bootstrap.servers': brokers, acks: -1, 'enable.idempotence': true, 'linger.ms': 1, dr_cb: true, 'socket.nagle.disable': true });
    producer.on('delivery-report', () => delivered++);
    await new Promise<void>((resolve, reject) => producer.connect({ timeout: 10_000 }, (error) => (error ? reject(error) : resolve())));
    producer.setPollInBackground(true);
    if (metadataFirst) await new Promise<void>((resolve, reject) => producer.getMetadata({ allTopics: false, timeout: 10_000 }, (error) => (error ? reject(error) : resolve())));
    return producer;
  };
  const close = (producer: Producer) => new Promise<void>((resolve) => producer.disconnect(5_000, resolve));
  const acknowledged = async (count: number) => {
    while (delivered < count) await new Promise((resolve) => setTimeout(resolve, 1));
  };

  // Each start produces to a topic that already exists, as a relay's do (made by a kafkajs producer).
  const warmer = await connectedProducer(kafkaBrokers, 'first-batch-warmer');
  console.log(`First batch of 100 after connecting, ${STARTS} fresh producers each way (ms until every delivery report is in):`);
  for (const metadataFirst of [false, true]) {
    const times: number[] = [];
    for (let start = 0; start < STARTS; start++) {
      const topic = `bench-first-batch-${suffix()}`;
      await warmTopic(warmer, topic);
      const producer = await open(metadataFirst);
      delivered = 0;
      const began = performance.now();
      for (let n = 0; n < 100; n++) producer.produce(topic, null, Buffer.from('x'.repeat(600)), `k${n}`, null, n, HEADERS);
      await acknowledged(100);
      times.push(performance.now() - began);
      await close(producer);
    }
    console.log(`- ${metadataFirst ? 'with a brokers-only metadata request after connecting' : 'connect() alone'}: ${times.map((ms) => fmt(ms, 0)).join(', ')}`);
  }
  await warmer.disconnect();

  const producer = await open(true);
  const topic = `bench-produce-call-${suffix()}`;
  const value = Buffer.from('x'.repeat(645));
  console.log(`\nOne produce() call, µs on the calling thread (${CALLS} calls, second of two rounds):`);
  for (const count of [0, 1, 6]) {
    let perCall = 0;
    for (let round = 0; round < 2; round++) {
      delivered = 0;
      const began = performance.now();
      for (let n = 0; n < CALLS; n++) producer.produce(topic, null, value, `key-${n % 1000}`, null, n, count === 0 ? undefined : HEADERS.slice(0, count));
      perCall = ((performance.now() - began) * 1000) / CALLS;
      await acknowledged(CALLS);
    }
    console.log(`- ${count} header${count === 1 ? '' : 's'}: ${fmt(perCall, 2)} µs`);
  }
  await close(producer);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
