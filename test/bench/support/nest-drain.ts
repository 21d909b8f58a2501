import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import diagnosticsChannel from 'node:diagnostics_channel';
import { ConfluentKafkaTransport, dropWalSlot, OUTBOX_CHANNELS, OutboxPublisher, OutboxRelayHost } from './outbox';
import { pidCpuMs, processCpuMs, ServerCpu } from './cpu';
import { type BenchServices, connectedProducer, waitUntil, warmTopic } from './env';
import { startBenchApp } from './nest-apps';
import { profiledWindow } from './drain-profile';

export type DeliveryMode = 'table' | 'wal';

export interface NestDrainOptions {
  services: BenchServices;
  /** The schema of the outbox table (`outbox_messages`); created by the writer when `migrate`. */
  schema: string;
  migrate: boolean;
  mode: DeliveryMode;
  topic: string;
  /** The WAL mode's slot (and publication); ignored in the table mode. */
  slotName: string;
  /** Module option; the module's default when left out. */
  batchSize?: number;
  /** The WAL mode's `wal.write` (the module's default, `'row'`, when left out). */
  walWrite?: 'row' | 'message';
  /** The module's `envelope.headers` (its default, `'all'`, when left out). */
  envelopeHeaders?: 'all' | 'id-and-type' | 'none';
  /** The WAL mode's `wal.readerThread` (the module's default, `'main'`, when left out). */
  readerThread?: 'main' | 'worker';
  /** The relaying app's transport: Nest's `ClientKafka` (kafkajs, the default) or `ConfluentKafkaTransport` (librdkafka). */
  kafkaClient?: 'kafkajs' | 'librdkafka';
  /**
   * Default true: the relaying app readies its transports at bootstrap, as the library does. False
   * runs the path before that change, for a before/after in one run: nothing connects before the
   * first claim (table mode), the WAL stream's connect is not waited for, no topic metadata is asked for.
   */
  warmUp?: boolean;
  /**
   * `'start'` (default): the clock runs from the relaying app's creation (init and bootstrap
   * included). `'relay'`: the app starts with `relayStart: 'manual'` (table mode only) and the
   * clock runs from `OutboxRelayHost.start()` once it is up: the warm drain.
   */
  clockFrom?: 'start' | 'relay';
  /** Writes the backlog through the write-only instance's publisher (not timed). */
  write(publisher: OutboxPublisher, dataSource: DataSource): Promise<void>;
}

export interface NestDrainResult {
  /** Seconds from the relaying instance's start until the backlog was drained. */
  seconds: number;
  /** Of which the Nest app's start (init and bootstrap); with `clockFrom: 'relay'`, the start before the clock. */
  startSeconds: number;
  /** From the clock's start to the first event acknowledged and settled (the `nest-outbox:published` channel). */
  firstSeconds: number;
  /**
   * CPU used during the drain, % of one core: this process (the relaying app, and the drain
   * probe's queries), PostgreSQL's processes, the Kafka test broker (NaN where unreadable).
   */
  cpu: { relay: number; postgres: number; broker: number };
  /** Share of the drain this process's main thread was busy (event loop utilization, 0 to 1): where the transports publish. */
  mainThreadBusy: number;
}

/**
 * One delivery mode draining a backlog through a Nest app as the README wires it (Kafka client
 * with `acks: -1`): a write-only instance (`relay: false`) writes the backlog, then a relaying
 * instance starts with the clock. Drained means: no pending row (table), or the slot confirmed
 * past the last commit (WAL; confirmed only after the broker acknowledged everything before it),
 * with no message moved to the table. Used by P1's WAL row and by wal-drain.ts.
 */
export async function drainThroughNestApp(options: NestDrainOptions): Promise<NestDrainResult> {
  const { services, schema, mode, topic, slotName } = options;
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  // defaultTopic, a destination the app declares: the relay readies it at bootstrap (a resolveTopic that answers for every event would not be asked without a declared event type).
  const outbox = { delivery: mode, wal: { slotName, write: options.walWrite, readerThread: options.readerThread }, defaultTopic: topic, ...(options.batchSize ? { batchSize: options.batchSize } : {}), ...(options.envelopeHeaders ? { envelope: { headers: options.envelopeHeaders } } : {}) };
  const librdkafka = options.kafkaClient === 'librdkafka';
  const manual = options.clockFrom === 'relay';
  if (manual && mode !== 'table') throw new Error("drainThroughNestApp: clockFrom 'relay' needs the table mode (the WAL stream starts at bootstrap whatever relayStart says)");
  const relaying = () =>
    startBenchApp({
      postgresUrl: services.postgresUrl,
      schema,
      migrate: false,
      kafka: librdkafka ? undefined : { brokers: services.kafkaBrokers, clientId: `drain-${mode}` },
      outbox: {
        ...outbox,
        transport: librdkafka ? new ConfluentKafkaTransport({ brokers: services.kafkaBrokers, clientId: `drain-${mode}` }) : 'KAFKA',
        pollIntervalMs: 50,
        ...(manual ? { relayStart: 'manual' as const } : {}),
      },
    });
  try {
    if (mode === 'wal' && options.walWrite !== 'message') {
      // Rows written before any slot exists go to the table relay when the first is made: a
      // relaying instance makes the slot first (not timed), so that the stream drains them.
      if (options.migrate) await (await startBenchApp({ postgresUrl: services.postgresUrl, schema, migrate: true, outbox: { ...outbox, relay: false } })).app.close();
      await (await relaying()).app.close();
    }
    const writer = await startBenchApp({ postgresUrl: services.postgresUrl, schema, migrate: options.migrate, outbox: { ...outbox, relay: false } });
    try {
      await options.write(writer.app.get(OutboxPublisher), writer.dataSource);
    } finally {
      await writer.app.close();
    }
    const end = (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn as string;
    const rowsBefore = await rowCount(admin, schema);
    const producer = await connectedProducer(services.kafkaBrokers, `warm-${mode}`);
    await warmTopic(producer, topic);
    await producer.disconnect();

    const server = await ServerCpu.of(admin);
    const brokerPid = Number(process.env.OUTBOX_TEST_KAFKA_MOCK_PID);
    const cpuBefore = { relay: processCpuMs(), postgres: server?.snapshot(), broker: brokerPid ? pidCpuMs(brokerPid) : Number.NaN };
    const endProfile = await profiledWindow(`${mode}-${options.walWrite ?? 'row'}-${options.kafkaClient ?? 'kafkajs'}${options.readerThread === 'worker' ? '-worker' : ''}`);
    const cpuStarted = performance.now();
    const loopBefore = performance.eventLoopUtilization();
    // Only the first: a subscriber makes the relay build an event per message, unsubscribed at once.
    let firstPublished = Number.NaN;
    const onFirst = () => {
      firstPublished = performance.now();
      diagnosticsChannel.unsubscribe(OUTBOX_CHANNELS.published, onFirst);
    };
    diagnosticsChannel.subscribe(OUTBOX_CHANNELS.published, onFirst);
    let started = performance.now();
    const relay = options.warmUp === false ? await withoutTransportWarmUp(relaying) : await relaying();
    const ready = performance.now();
    if (manual) {
      // With relayStart 'manual' the relay readies its transports when started: done first, the drain is warm.
      const host = relay.app.get(OutboxRelayHost);
      if (options.warmUp !== false) await host.transportsReady();
      started = performance.now();
      host.start();
    }
    let seconds: number;
    let cpu: NestDrainResult['cpu'];
    let mainThreadBusy: number;
    try {
      const drained = mode === 'table' ? () => tableDrained(admin, schema) : () => slotConfirmed(admin, slotName, end);
      await waitUntil(`${mode}: the backlog drained`, drained, 600_000, 10);
      // Taken before the app closes: its shutdown is not part of the drain.
      seconds = (performance.now() - started) / 1000;
      // Over the app's start too when the clock starts later (clockFrom 'relay').
      const cpuSeconds = (performance.now() - cpuStarted) / 1000;
      const share = (ms: number) => ms / (cpuSeconds * 10);
      cpu = {
        relay: share(processCpuMs() - cpuBefore.relay),
        postgres: server && cpuBefore.postgres ? share(server.millisecondsSince(cpuBefore.postgres)) : Number.NaN,
        broker: share(brokerPid ? pidCpuMs(brokerPid) - cpuBefore.broker : Number.NaN),
      };
      mainThreadBusy = performance.eventLoopUtilization(loopBefore).utilization;
      await endProfile();
    } finally {
      diagnosticsChannel.unsubscribe(OUTBOX_CHANNELS.published, onFirst);
      await relay.app.close();
    }
    if (mode === 'wal') {
      // A message the stream gave up on becomes a row of the table relay (published by it): not a clean stream drain.
      const rows = (await tableRelayRowCount(admin, schema)) - (options.walWrite === 'message' ? rowsBefore : 0);
      if (rows > 0) throw new Error(`the WAL relay moved ${rows} messages to the outbox table during the drain`);
    }
    return { seconds, startSeconds: manual ? (ready - cpuStarted) / 1000 : (ready - started) / 1000, firstSeconds: (firstPublished - started) / 1000, cpu, mainThreadBusy };
  } finally {
    if (mode === 'wal') await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName, publicationName: slotName }).catch(() => undefined);
    await admin.end();
  }
}

/** Rows the table relay owns: not the stream's own (`wal.write: 'row'`, leased until 'infinity'). */
async function tableRelayRowCount(admin: Client, schema: string): Promise<number> {
  return Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.outbox_messages WHERE lease_expires_at IS DISTINCT FROM 'infinity'`)).rows[0].n);
}

async function rowCount(admin: Client, schema: string): Promise<number> {
  return Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.outbox_messages`)).rows[0].n);
}

// Asked every 10 ms while the relay drains: a count of the pending rows read the whole backlog
// each time, 5–14 ms of PostgreSQL's CPU per look, which the drain (bound by PostgreSQL) paid for.
async function tableDrained(admin: Client, schema: string): Promise<boolean> {
  return (await admin.query(`SELECT NOT EXISTS (SELECT 1 FROM ${schema}.outbox_messages WHERE status = 'pending') AS drained`)).rows[0].drained === true;
}

async function slotConfirmed(admin: Client, slotName: string, end: string): Promise<boolean> {
  return (await admin.query(`SELECT confirmed_flush_lsn >= $2::pg_lsn AS done FROM pg_replication_slots WHERE slot_name = $1`, [slotName, end])).rows[0]?.done === true;
}

/**
 * The relay host as it was before it readied its transports at bootstrap: `transportsReady()`
 * resolves at once for the apps started inside `work`. Bench-only, for a before/after in one run.
 */
async function withoutTransportWarmUp<T>(work: () => Promise<T>): Promise<T> {
  const host = OutboxRelayHost.prototype;
  const ready = Object.getOwnPropertyDescriptor(host, 'transportsReady')!;
  Object.defineProperty(host, 'transportsReady', { ...ready, value: () => Promise.resolve() });
  try {
    return await work();
  } finally {
    Object.defineProperty(host, 'transportsReady', ready);
  }
}
