import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { Worker } from './support/child';
import { processCpuMs, pidCpuMs, ServerCpu } from './support/cpu';
import { benchServices, connectedProducer, privateSchema, suffix, waitUntil, warmTopic } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { dropWalSlot, OutboxPublisher } from './support/outbox';
import { fmt } from './support/stats';

/**
 * SCALING.md's check of the WAL mode's per-relay figure: the WAL mode has one stream per slot, so
 * it scales by slots (one per database or shard). 1, 2 and 3 slots (each an outbox of its own in a
 * schema of its own, on the one PostgreSQL server), each streamed by its own relay process (the
 * Nest app, `delivery: 'wal'`, `batchSize` 500), drain a backlog of EVENTS each at the same time;
 * the clock runs from "go" (the relay apps start then, together: their start, about a second, is
 * in the time) until every slot is confirmed past its last commit.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-streams.js [events per stream]
 */
const EVENTS = Number(process.argv[2] ?? 40_000);
const PER_TRANSACTION = 100;
const STREAMS = [1, 2, 3];

interface Outbox {
  schema: string;
  slotName: string;
  topic: string;
  end: string;
  drop(): Promise<void>;
}

async function main(): Promise<void> {
  const services = benchServices();
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  const lines: string[] = [];
  try {
    for (const streams of STREAMS) {
      const outboxes: Outbox[] = [];
      const relays: Worker[] = [];
      try {
        for (let i = 0; i < streams; i++) outboxes.push(await writeBacklog(services.postgresUrl, services.kafkaBrokers, admin));
        for (const outbox of outboxes) {
          relays.push(
            new Worker('relay-worker', {
              mode: 'nest',
              postgresUrl: services.postgresUrl,
              schema: outbox.schema,
              brokers: services.kafkaBrokers,
              topic: outbox.topic,
              owner: `streams-${suffix(2)}`,
              delivery: 'wal',
              slotName: outbox.slotName,
              batchSize: 500,
              // Loaded first; the apps start together on "go", and their start is part of the drain's time.
              waitForGo: true,
            }),
          );
        }
        await Promise.all(relays.map((relay) => relay.next('ready', 120_000)));
        const server = await ServerCpu.of(admin);
        const before = { at: performance.now(), server: server?.snapshot(), relays: relays.map((relay) => pidCpuMs(relay.pid)), self: processCpuMs() };
        relays.forEach((relay) => relay.send({ type: 'go' }));
        await waitUntil(
          'every slot confirmed past its backlog',
          async () => (await Promise.all(outboxes.map((o) => confirmedPast(admin, o)))).every(Boolean),
          600_000,
          10,
        );
        const seconds = (performance.now() - before.at) / 1000;
        const share = (ms: number) => (ms / (seconds * 1000)) * 100;
        const relayCpu = relays.map((relay, i) => share(pidCpuMs(relay.pid) - before.relays[i]));
        const serverCpu = server && before.server ? share(server.millisecondsSince(before.server)) : Number.NaN;
        const total = (streams * EVENTS) / seconds;
        // µs of CPU per message (relays together, PostgreSQL): what the capacity model divides cores by.
        const perMessage = (percent: number) => (percent * seconds * 10_000) / (streams * EVENTS);
        const relaysPerMessage = perMessage(relayCpu.reduce((sum, c) => sum + c, 0));
        lines.push(
          `| ${streams} | ${fmt(seconds, 2)} | ${fmt(total, 0)} | ${fmt(total / streams, 0)} | ${relayCpu.map((c) => fmt(c, 0)).join(' / ')} | ${fmt(serverCpu, 0)} | ` +
            `${fmt(relaysPerMessage, 0)} / ${fmt(perMessage(serverCpu), 1)} |`,
        );
        console.error(lines.at(-1));
      } finally {
        await Promise.all(relays.map((relay) => relay.close()));
        for (const outbox of outboxes) {
          await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName: outbox.slotName, publicationName: outbox.slotName }).catch(() => undefined);
          await outbox.drop();
        }
      }
    }
  } finally {
    await admin.end();
  }
  console.log(`${EVENTS} events of ~500 B per stream (${PER_TRANSACTION} per transaction), batchSize 500, acks -1, Kafka test broker; PostgreSQL wal_level=logical, fsync on`);
  console.log('| slots (= relay processes) | seconds | msg/s, all streams | msg/s per stream | CPU % of a core per relay process | PostgreSQL CPU % | CPU µs per message: relays / PostgreSQL |');
  console.log('|---|---|---|---|---|---|---|');
  lines.forEach((line) => console.log(line));
}

/** A schema with its outbox, slot and EVENTS events written by a write-only instance (not timed). */
async function writeBacklog(postgresUrl: string, brokers: string[], admin: Client): Promise<Outbox> {
  const { schema, drop } = await privateSchema(postgresUrl, 'bench_streams');
  const slotName = `${schema}_slot`;
  const topic = `bench-streams-${schema}`;
  const writer = await startBenchApp({ postgresUrl, schema, migrate: true, outbox: { relay: false, delivery: 'wal', wal: { slotName }, resolveTopic: () => topic } });
  try {
    const publisher = writer.app.get(OutboxPublisher);
    const payload = { note: 'x'.repeat(380) };
    for (let done = 0; done < EVENTS; done += PER_TRANSACTION) {
      const events = Array.from({ length: PER_TRANSACTION }, (_, i) => ({ type: 'bench.noted', aggregateType: 'bench', aggregateId: aggregate(done + i), payload }));
      await writer.dataSource.transaction((manager) => publisher.add(manager, events));
    }
  } finally {
    await writer.app.close();
  }
  const producer = await connectedProducer(brokers, 'warm-streams');
  await warmTopic(producer, topic);
  await producer.disconnect();
  const end = (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn as string;
  return { schema, slotName, topic, end, drop };
}

const aggregate = (n: number) => createHash('md5').update(String(n % 1000)).digest('hex').slice(0, 16);

async function confirmedPast(admin: Client, outbox: Outbox): Promise<boolean> {
  return (await admin.query(`SELECT confirmed_flush_lsn >= $2::pg_lsn AS done FROM pg_replication_slots WHERE slot_name = $1`, [outbox.slotName, outbox.end])).rows[0]?.done === true;
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
