import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Client as PgClient, type Client } from 'pg';
import { OutboxModule } from './support/outbox';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { processCpuMs, ServerCpu } from './support/cpu';
import { connectedProducer, databaseUrl, kafkaLogLevel, suffix, waitUntil, warmTopic, withClient } from './support/env';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { seedOutboxTable } from './support/seed';

@Module({})
class SeveralOutboxesApp {}

const COUNTS = [1, 2, 3] as const;

interface Result {
  databases: number;
  rows: number;
  seconds: number;
  /** Seconds until each database's table was drained, from the app's start. */
  perDatabase: number[];
  cpu: { relay: number; postgres: number };
}

/**
 * P11: one app with 1, 2 and 3 named outboxes, each on its own database of the benchmark's
 * PostgreSQL server, each draining the same backlog through one shared Kafka client. Says what a
 * database adds in one process on this machine, and what bounds it (the CPU split).
 */
export async function p11SeveralOutboxes({ services, sizes, log }: BenchContext): Promise<Section> {
  const rowsPerDatabase = Math.round(sizes.drainRows / 2);
  const results: Result[] = [];
  for (const databases of COUNTS) {
    const run = suffix();
    const names = Array.from({ length: databases }, (_, i) => `bench_p11_${run}_${i + 1}`);
    const topic = `bench-p11-${run}`;
    await withClient(services.postgresUrl, async (admin) => {
      try {
        for (const name of names) await admin.query(`CREATE DATABASE ${name}`);
        for (const name of names) await withClient(databaseUrl(services.postgresUrl, name), (client) => seed(client, topic, rowsPerDatabase));
        const producer = await connectedProducer(services.kafkaBrokers, `warm-p11-${run}`);
        await warmTopic(producer, topic);
        await producer.disconnect();
        log(`P11: ${databases} database(s) × ${rowsPerDatabase} rows`);
        results.push(await drain(admin, services, names, topic, rowsPerDatabase));
      } finally {
        for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    });
  }
  const one = results[0];
  const total = (r: Result) => (r.rows * r.databases) / r.seconds;
  const summary: SummaryRow[] = results.slice(1).map((r) => ({
    bench: 'P11',
    figure: `${r.databases} outboxes in one app: messages/s in all vs one outbox`,
    value: `${(total(r) / total(one)).toFixed(2)}×`,
  }));
  return {
    id: 'P11',
    title: `P11 — several outboxes in one app: 1, 2 and 3 databases, ${rowsPerDatabase.toLocaleString('en-US')} rows each, one Kafka client`,
    body: [
      ...table(
        ['databases', 'messages/s in all', 'vs one', 'messages/s per database (each drained after, s)', 'CPU: app process / PostgreSQL (% of one core)'],
        results.map((r) => [
          String(r.databases),
          Math.round(total(r)).toLocaleString('en-US'),
          `${(total(r) / total(one)).toFixed(2)}×`,
          r.perDatabase.map((s) => `${Math.round(r.rows / s).toLocaleString('en-US')} (${s.toFixed(2)})`).join(', '),
          `${Math.round(r.cpu.relay)} / ${Math.round(r.cpu.postgres)}`,
        ]),
      ),
      '',
      'Each outbox is `OutboxModule.forRoot({ name, connection: { url }, transport: \'KAFKA\' })` on a database of its own on the one server, ' +
        'table mode, batches of 100, all outboxes of a run publishing through one `ClientKafka` (acks −1) to one topic. ' +
        'The app and PostgreSQL share the machine\'s cores with the Kafka test broker: past one database the CPU column says which of them bounds the total.',
    ],
    summary,
  };
}

async function seed(client: Client, topic: string, rows: number): Promise<void> {
  const outbox = OutboxTable.on('postgres', { tableName: 'outbox_messages' });
  for (const sql of tableDialectFor('postgres', outbox).createTable()) await client.query(sql);
  await seedOutboxTable(client, 'public', 'outbox_messages', topic, { count: rows, eventsPerAggregate: 10 });
}

async function drain(admin: Client, services: BenchContext['services'], names: string[], topic: string, rows: number): Promise<Result> {
  const urls = names.map((name) => databaseUrl(services.postgresUrl, name));
  const server = await ServerCpu.of(admin);
  const imports: DynamicModule[] = [
    ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: 'bench-p11', brokers: services.kafkaBrokers, logLevel: kafkaLogLevel() }, producerOnlyMode: true, send: { acks: -1 } } }]),
    ...urls.map((url, i) => OutboxModule.forRoot({ name: `db${i + 1}`, connection: { url }, transport: 'KAFKA', resolveTopic: () => topic, pollIntervalMs: 50 })),
  ];
  // One probe connection per database, opened before the clock: the probe costs a query per 20 ms, not a connection.
  const probes = await Promise.all(urls.map(async (url) => {
    const client = new PgClient({ connectionString: url });
    await client.connect();
    return client;
  }));
  const before = { relay: processCpuMs(), postgres: server?.snapshot() };
  const started = performance.now();
  const perDatabase: number[] = names.map(() => Number.NaN);
  let cpuMs = { relay: Number.NaN, postgres: Number.NaN };
  let app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>> | undefined;
  try {
    app = await NestFactory.createApplicationContext({ module: SeveralOutboxesApp, imports }, { logger: false });
    await waitUntil(`${names.length} outbox table(s) drained`, async () => {
      await Promise.all(probes.map(async (probe, i) => {
        if (!Number.isNaN(perDatabase[i])) return;
        // Not a count: that reads every pending row, every 20 ms, on the server the relays are timed on.
        const drained = (await probe.query(`SELECT NOT EXISTS (SELECT 1 FROM outbox_messages WHERE status = 'pending') AS drained`)).rows[0].drained === true;
        if (drained) perDatabase[i] = (performance.now() - started) / 1000;
      }));
      return perDatabase.every((seconds) => !Number.isNaN(seconds));
    }, 600_000, 20);
    // Read before the app closes: its connections' backends end with it, and their CPU with them.
    cpuMs = { relay: processCpuMs() - before.relay, postgres: server && before.postgres ? server.millisecondsSince(before.postgres) : Number.NaN };
  } finally {
    await app?.close();
    await Promise.all(probes.map((probe) => probe.end()));
  }
  const seconds = Math.max(...perDatabase);
  const share = (ms: number) => ms / (seconds * 10);
  return {
    databases: names.length,
    rows,
    seconds,
    perDatabase,
    cpu: { relay: share(cpuMs.relay), postgres: share(cpuMs.postgres) },
  };
}
