import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { dropWalSlot, OutboxPublisher, toOutgoingMessage } from './support/outbox';
import { benchServices, connectedProducer, privateSchema, suffix, waitUntil, warmTopic } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { fmt } from './support/stats';

/**
 * A first side-by-side of the two delivery modes draining the same backlog to the Kafka test
 * broker (acks -1, batches of 500), in one run: raw kafkajs sending the same records from memory
 * (the ceiling), the table relay, and the WAL relay streaming a slot. The backlog is written first
 * by a write-only instance of each mode (WAL_DRAIN_MODES=wal for one); the clock runs from the relaying instance's start until
 * the table has no pending row, or the slot is confirmed past the last commit.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-drain.js
 */
const EVENTS = Number(process.env.WAL_DRAIN_EVENTS ?? 20_000);
const PER_TRANSACTION = 100;
const BATCH = 500;

async function main(): Promise<void> {
  const services = benchServices();
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_wal_drain');
  const slotName = `${schema}_slot`;
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  const payload = { note: 'x'.repeat(380) };
  const topicOf = (mode: string) => `bench-wal-drain-${mode}-${suffix()}`;
  try {
    const raw = await rawKafka(services.kafkaBrokers, topicOf('raw'), payload);
    const results: Array<[string, number, number, number]> = [];
    const modes = (process.env.WAL_DRAIN_MODES ?? 'table,wal').split(',') as Array<'table' | 'wal'>;
    for (const mode of modes) {
      const topic = topicOf(mode);
      const outbox = { delivery: mode, wal: { slotName }, resolveTopic: () => topic, batchSize: BATCH };
      const writer = await startBenchApp({ postgresUrl: services.postgresUrl, schema, migrate: mode === modes[0], outbox: { ...outbox, relay: false } });
      const publisher = writer.app.get(OutboxPublisher);
      for (let done = 0; done < EVENTS; done += PER_TRANSACTION) {
        const events = Array.from({ length: PER_TRANSACTION }, (_, i) => ({ type: 'bench.noted', aggregateType: 'bench', aggregateId: `a${(done + i) % 1000}`, payload }));
        await writer.dataSource.transaction((manager) => publisher.add(manager, events));
      }
      const end = (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn as string;
      await writer.app.close();
      const producer = await connectedProducer(services.kafkaBrokers, `warm-${mode}`);
      await warmTopic(producer, topic);
      await producer.disconnect();
      const started = performance.now();
      const relay = await startBenchApp({
        postgresUrl: services.postgresUrl,
        schema,
        migrate: false,
        kafka: { brokers: services.kafkaBrokers, clientId: `drain-${mode}` },
        outbox: { ...outbox, transport: 'KAFKA', pollIntervalMs: 50 },
      });
      const ready = performance.now();
      const drained = mode === 'table' ? () => tableDrained(admin, schema) : () => slotConfirmed(admin, slotName, end);
      await waitUntil(`${mode}: the backlog drained`, drained, 600_000, 10);
      const seconds = (performance.now() - started) / 1000;
      results.push([mode, EVENTS / seconds, seconds, (ready - started) / 1000]);
      await relay.app.close();
    }
    console.log(`${EVENTS} events of ~500 B, batches of ${BATCH}, acks -1, Kafka test broker; PostgreSQL wal_level=logical, fsync on`);
    console.log('| contender | msg/s from the start | × raw kafkajs | seconds | of which the app start |');
    console.log('|---|---|---|---|---|');
    console.log(`| raw kafkajs (the same records, from memory) | ${fmt(raw, 0)} | 1.00 | ${fmt(EVENTS / raw, 2)} | |`);
    for (const [mode, perSecond, seconds, start] of results) {
      console.log(`| ${mode} relay (Nest app) | ${fmt(perSecond, 0)} | ${fmt(perSecond / raw, 2)} | ${fmt(seconds, 2)} | ${fmt(start, 2)} |`);
    }
  } finally {
    await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName, publicationName: slotName }).catch(() => undefined);
    await admin.end();
    await drop();
  }
}

async function rawKafka(brokers: string[], topic: string, payload: object): Promise<number> {
  const producer = await connectedProducer(brokers, 'raw');
  await warmTopic(producer, topic);
  // The very records the library's Kafka transport sends (envelope and headers), built before the clock starts.
  const records = Array.from({ length: EVENTS }, (_, n) => {
    const outgoing = toOutgoingMessage({
      id: randomUUID(), type: 'bench.noted', version: 1, aggregateType: 'bench', aggregateId: `a${n % 1000}`, transport: 'default', destination: topic,
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

async function tableDrained(admin: Client, schema: string): Promise<boolean> {
  return Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.outbox_messages WHERE status = 'pending'`)).rows[0].n) === 0;
}

async function slotConfirmed(admin: Client, slotName: string, end: string): Promise<boolean> {
  return (await admin.query(`SELECT confirmed_flush_lsn >= $2::pg_lsn AS done FROM pg_replication_slots WHERE slot_name = $1`, [slotName, end])).rows[0]?.done === true;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
