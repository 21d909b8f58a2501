import { randomUUID } from 'node:crypto';
import { toOutgoingMessage } from './support/outbox';
import { benchServices, connectedProducer, privateSchema, suffix, warmTopic } from './support/env';
import { type DeliveryMode, drainThroughNestApp } from './support/nest-drain';
import { fmt } from './support/stats';

/**
 * A first side-by-side of the two delivery modes draining the same backlog to the Kafka test
 * broker (acks -1), in one run: raw kafkajs sending the same records from memory
 * (the ceiling), the table relay, and the WAL relay streaming a slot (WAL_DRAIN_BATCH: batch size, default 500). The backlog is written first
 * by a write-only instance of each mode (WAL_DRAIN_MODES=wal for one); the clock runs from the relaying instance's start until
 * the table has no pending row, or the slot is confirmed past the last commit. WAL_DRAIN_CLIENT=librdkafka
 * relays through `ConfluentKafkaTransport` instead of Nest's `ClientKafka`; WAL_DRAIN_EVENTS (default 20,000)
 * and WAL_DRAIN_AGGREGATES (default 1,000) size the backlog; WAL_DRAIN_WRITE=row|message picks the WAL mode's write.
 * BENCH_DRAIN_PROFILE=<file prefix> writes a CPU profile of each relaying app's drain (support/drain-profile.ts).
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-drain.js
 */
const EVENTS = Number(process.env.WAL_DRAIN_EVENTS ?? 20_000);
const PER_TRANSACTION = 100;
const BATCH = Number(process.env.WAL_DRAIN_BATCH ?? 500);
// Distinct aggregates the events cycle through (P1's backlog has a quarter of its event count).
const AGGREGATES = Number(process.env.WAL_DRAIN_AGGREGATES ?? 1000);
// The relaying app's Kafka client: kafkajs through Nest's `ClientKafka` (default) or librdkafka.
const CLIENT = process.env.WAL_DRAIN_CLIENT === 'librdkafka' ? 'librdkafka' : 'kafkajs';
// The WAL mode's write (WAL_DRAIN_WRITE=row|message; the module's default, 'row', when unset).
const WAL_WRITE = process.env.WAL_DRAIN_WRITE === 'message' ? 'message' : process.env.WAL_DRAIN_WRITE === 'row' ? 'row' : undefined;

async function main(): Promise<void> {
  const services = benchServices();
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_wal_drain');
  const payload = { note: 'x'.repeat(380) };
  const topicOf = (mode: string) => `bench-wal-drain-${mode}-${suffix()}`;
  try {
    const raw = await rawKafka(services.kafkaBrokers, topicOf('raw'), payload);
    const results: Array<[string, number, number, number, string]> = [];
    const modes = (process.env.WAL_DRAIN_MODES ?? 'table,wal').split(',') as DeliveryMode[];
    for (const mode of modes) {
      const { seconds, startSeconds, cpu } = await drainThroughNestApp({
        services,
        schema,
        migrate: mode === modes[0],
        mode,
        topic: topicOf(mode),
        slotName: `${schema}_slot`,
        batchSize: BATCH,
        kafkaClient: CLIENT,
        walWrite: WAL_WRITE,
        write: async (publisher, dataSource) => {
          for (let done = 0; done < EVENTS; done += PER_TRANSACTION) {
            const events = Array.from({ length: PER_TRANSACTION }, (_, i) => ({ type: 'bench.noted', aggregateType: 'bench', aggregateId: `a${(done + i) % AGGREGATES}`, payload }));
            await dataSource.transaction((manager) => publisher.add(manager, events));
          }
        },
      });
      results.push([mode, EVENTS / seconds, seconds, startSeconds, `${fmt(cpu.relay, 0)} / ${fmt(cpu.postgres, 0)} / ${fmt(cpu.broker, 0)}`]);
    }
    console.log(`${EVENTS} events of ~500 B, batches of ${BATCH}, relayed with ${CLIENT}, acks -1, Kafka test broker; PostgreSQL wal_level=logical, fsync on`);
    console.log('| contender | msg/s from the start | × raw kafkajs | seconds | of which the app start | CPU % of a core: relay process / PostgreSQL / broker |');
    console.log('|---|---|---|---|---|---|');
    console.log(`| raw kafkajs (the same records, from memory) | ${fmt(raw, 0)} | 1.00 | ${fmt(EVENTS / raw, 2)} | | |`);
    for (const [mode, perSecond, seconds, start, used] of results) {
      console.log(`| ${mode} relay (Nest app) | ${fmt(perSecond, 0)} | ${fmt(perSecond / raw, 2)} | ${fmt(seconds, 2)} | ${fmt(start, 2)} | ${used} |`);
    }
  } finally {
    await drop();
  }
}

async function rawKafka(brokers: string[], topic: string, payload: object): Promise<number> {
  const producer = await connectedProducer(brokers, 'raw');
  await warmTopic(producer, topic);
  // The very records the library's Kafka transport sends (envelope and headers), built before the clock starts.
  const records = Array.from({ length: EVENTS }, (_, n) => {
    const outgoing = toOutgoingMessage({
      id: randomUUID(), type: 'bench.noted', version: 1, aggregateType: 'bench', aggregateId: `a${n % AGGREGATES}`, transport: 'default', destination: topic,
      occurredAt: new Date().toISOString(), headers: {}, payloadJson: JSON.stringify(payload), position: String(n), attempt: 1,
    });
    return { key: outgoing.key, value: JSON.stringify(outgoing.envelope), headers: outgoing.headers };
  });
  const started = performance.now();
  for (let sent = 0; sent < EVENTS; sent += BATCH) await producer.send({ topic, acks: -1, messages: records.slice(sent, sent + BATCH) });
  const seconds = (performance.now() - started) / 1000;
  await producer.disconnect();
  return EVENTS / seconds;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
