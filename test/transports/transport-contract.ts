import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Controller, Module, type DynamicModule, type INestMicroservice, type LoggerService, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  BaseRpcContext,
  ClientProxyFactory,
  ClientsModule,
  Ctx,
  EventPattern,
  Payload,
  type ClientOptions,
  type ClientProviderOptions,
  type ClientProxy,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { filter, firstValueFrom, lastValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxConfigurationError, OutboxModule, type OutboxEnvelope, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { Parcel, PARCEL_ENTITIES, ParcelRelabelled } from '../support/parcel.fixtures';
import { requireService, serviceEnv, type ServiceName } from '../support/services';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const REPO_ROOT = join(__dirname, '..', '..');

/** What a consumer could see next to the body, read from the Nest context of the transport. */
export interface ReceivedMetadata {
  /** The message key, if the broker carries one (on header brokers: the `outbox-key` header). */
  key?: string;
  /** String headers / user properties as the consumer sees them. */
  headers: Record<string, string>;
  /** Other transport-specific facts (message properties, QoS, subject...), compared with `expectedProperties`. */
  properties: Record<string, unknown>;
}

/** One test's private names and controls, handed to the spec's builders. */
export interface TransportRun {
  /** Random per test: queue, topic, subject and client ids derive from it. */
  readonly suffix: string;
  /** Where the outbox publishes (every event of the run goes there). */
  readonly topic: string;
  /** A free loopback port, for specs whose consumer listens itself (TCP). */
  readonly port: number;
  /** Address of one of the spec's services, as read when the test started (stays valid during an outage). */
  url(service: ServiceName): string;
  /** Closes the consumer microservice (what it received is kept). */
  stopConsumer(): Promise<void>;
  /** Starts a new consumer microservice with the same options (same queue, port...). */
  startConsumer(): Promise<void>;
}

/** A broker that can be taken away and brought back with its port and data. */
export interface BrokerControl {
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A producing side that is not a `ClientsModule` client (e.g. a custom `OutboxTransport` provider). */
export interface CustomProducer {
  /** The token given to `OutboxModule.forRoot({ transport })`. */
  token: string | symbol;
  imports?: Array<DynamicModule | (new (...args: never[]) => unknown)>;
  providers?: Provider[];
}

export interface TransportSpec {
  /** The transport name the library reports (logs, errors), e.g. `rabbitmq`. */
  name: string;
  /** Services from scripts/services.sh this spec needs; missing ones fail with "how to start it". */
  services: ServiceName[];
  /** Destination for this run (topic, queue pattern, subject, channel). */
  topic(suffix: string): string;
  /** The producing side: a Nest client (registered with `ClientsModule`) or a custom provider. */
  producer(run: TransportRun): ClientProviderOptions | CustomProducer;
  /** The consuming side, for `NestFactory.createMicroservice`. */
  consumer(run: TransportRun): MicroserviceOptions;
  /** What the consumer can see besides the body. */
  metadata: {
    read(context: BaseRpcContext): ReceivedMetadata;
    /** Whether the envelope fields arrive as `outbox-*` headers (plus `outbox-key`), or no header at all. */
    headers: 'envelope' | 'none';
    /** Transport-specific facts expected for one message (compared with `toEqual`). */
    expectedProperties(envelope: OutboxEnvelope, run: TransportRun): Record<string, unknown>;
  };
  /** The `acknowledgement` level the library must report for this client. */
  acknowledgement: 'broker' | 'none';
  outage: {
    /** Takes the broker away and back, keeping its port and data. */
    broker(run: TransportRun): BrokerControl;
    /** What the relay records on a row whose publish failed while the broker was down. */
    lastError: RegExp;
    /**
     * What the broker promises for messages published after its restart:
     * - `all`: it keeps them for the consumer (durable queue, persistent session) or the
     *   consumer is the endpoint itself (TCP): every event must arrive;
     * - `subscribed-only`: pub/sub that keeps nothing for absent subscribers (Redis, core NATS):
     *   a message published before the consumer has subscribed again is gone. Such losses are
     *   allowed only for rows published before the consumer was seen back; every later one must arrive.
     */
    delivery: 'all' | 'subscribed-only';
    /** Client used to send probe messages that tell when the consumer is subscribed again (`subscribed-only`). */
    probe?(run: TransportRun): ClientOptions;
    /** Set (with the reason) when the Nest consumer does not come back by itself after a broker restart. */
    restartConsumer?: string;
  };
}

/** A custom producer names its token; anything else is a `ClientsModule` registration. */
const isCustomProducer = (producer: ClientProviderOptions | CustomProducer): producer is CustomProducer => 'token' in producer;

/** Stops / resumes a service of scripts/services.sh (keeps its data dir and port). */
export function serviceOutage(service: ServiceName): (run: TransportRun) => BrokerControl {
  // Asynchronous on purpose: the app and its relay keep running while the broker goes away and comes back.
  const services = (command: 'stop' | 'resume') =>
    run('bash', ['scripts/services.sh', command, service], {
      cwd: REPO_ROOT,
      env: { ...process.env, OUTBOX_SERVICES_DIR: serviceEnv().OUTBOX_SERVICES_DIR ?? join(REPO_ROOT, '.services') },
      timeout: 180_000,
    }).then(() => undefined);
  return () => ({ stop: () => services('stop'), start: () => services('resume') });
}

/** The consumer's headers as a plain object (header values that are lists are joined with commas). */
export function stringHeaders(headers: Record<string, unknown> | undefined | null): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : Buffer.isBuffer(value) ? value.toString() : String(value)]),
  );
}

interface LogEntry {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  message: string;
  context?: string;
}

/** Collects Nest logs (set OUTBOX_TEST_LOGS=1 to also print them). */
class CapturingLogger implements LoggerService {
  readonly entries: LogEntry[] = [];
  log = (message: unknown, ...rest: unknown[]) => this.add('log', message, rest);
  error = (message: unknown, ...rest: unknown[]) => this.add('error', message, rest);
  warn = (message: unknown, ...rest: unknown[]) => this.add('warn', message, rest);
  debug = (message: unknown, ...rest: unknown[]) => this.add('debug', message, rest);
  verbose = (message: unknown, ...rest: unknown[]) => this.add('verbose', message, rest);
  fatal = (message: unknown, ...rest: unknown[]) => this.add('fatal', message, rest);

  warnings(context: string): string[] {
    return this.entries.filter((entry) => entry.level === 'warn' && entry.context === context).map((entry) => entry.message);
  }

  private add(level: LogEntry['level'], message: unknown, rest: unknown[]): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const text = message instanceof Error ? message.message : typeof message === 'string' ? message : JSON.stringify(message);
    this.entries.push({ level, message: text, context });
    if (process.env.OUTBOX_TEST_LOGS) process.stderr.write(`[${new Date().toISOString()}] ${level} [${context ?? '-'}] ${text}\n`);
  }
}

interface Delivery {
  envelope: OutboxEnvelope;
  metadata: ReceivedMetadata;
  receivedAt: number;
}

/** Everything the consumer microservices of one test received, across consumer restarts. */
class Deliveries {
  readonly events: Delivery[] = [];
  readonly probes = new Map<string, number>();

  record(body: unknown, context: BaseRpcContext, read: (context: BaseRpcContext) => ReceivedMetadata): void {
    const probe = (body as { probe?: unknown } | null)?.probe;
    if (typeof probe === 'string') {
      this.probes.set(probe, Date.now());
      return;
    }
    this.events.push({ envelope: body as OutboxEnvelope, metadata: read(context), receivedAt: Date.now() });
  }

  ids(): Set<string> {
    return new Set(this.events.map((delivery) => delivery.envelope.id));
  }

  of(id: string): Delivery[] {
    return this.events.filter((delivery) => delivery.envelope.id === id);
  }

  forAggregate(aggregateId: string): Delivery[] {
    return this.events.filter((delivery) => delivery.envelope.aggregateId === aggregateId);
  }

  /** Deliveries beyond the first of each id (at-least-once). */
  duplicates(): number {
    return this.events.length - this.ids().size;
  }
}

interface OutboxRow {
  position: number;
  id: string;
  event_type: string;
  event_version: number;
  aggregate_type: string;
  aggregate_id: string;
  occurred_at: string;
  correlation_id: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  published_at: string | null;
  lease_token: string | null;
}

function consumerModule(topic: string, deliveries: Deliveries, read: (context: BaseRpcContext) => ReceivedMetadata) {
  @Controller()
  class ContractConsumer {
    @EventPattern(topic)
    handle(@Payload() body: unknown, @Ctx() context: unknown): void {
      deliveries.record(body, context as BaseRpcContext, read);
    }
  }
  @Module({ controllers: [ContractConsumer] })
  class ContractConsumerModule {}
  return ContractConsumerModule;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** SQLite keeps UTC text ('YYYY-MM-DD HH:MM:SS.SSS'). */
const sqliteTime = (text: string): number => Date.parse(`${text.replace(' ', 'T')}Z`);

/** The `outbox-*` headers a consumer must see for `envelope` on brokers that carry headers. */
function envelopeHeaders(envelope: OutboxEnvelope): Record<string, string> {
  return {
    'outbox-message-id': envelope.id,
    'outbox-event-type': envelope.type,
    'outbox-event-version': String(envelope.version),
    'outbox-aggregate-type': envelope.aggregateType,
    'outbox-aggregate-id': envelope.aggregateId,
    'outbox-occurred-at': envelope.occurredAt,
    ...(envelope.correlationId ? { 'outbox-correlation-id': envelope.correlationId } : {}),
    'outbox-key': envelope.aggregateId,
  };
}

interface Harness {
  run: TransportRun;
  deliveries: Deliveries;
  logger: CapturingLogger;
  app: TestingModule;
  client: ClientProxy | undefined;
  dataSource: DataSource;
  /** Run at close, before the apps are closed. */
  cleanups: Array<() => Promise<void>>;
  rows(): Promise<OutboxRow[]>;
  close(): Promise<void>;
}

/** Private names for one test, and start/stop of its consumer microservice (what it receives goes to `deliveries`). */
async function newRun(spec: TransportSpec, deliveries: Deliveries, logger: CapturingLogger): Promise<TransportRun> {
  // Read once: while a broker is stopped, scripts/services.sh lists it no more.
  const urls = new Map(spec.services.map((service) => [service, requireService(service)]));
  const suffix = randomBytes(5).toString('hex');
  const port = await freePort();
  let consumer: INestMicroservice | undefined;
  const run: TransportRun = {
    suffix,
    topic: spec.topic(suffix),
    port,
    url(service) {
      const url = urls.get(service);
      if (!url) throw new Error(`${spec.name}: "${service}" is not among the spec's services (${spec.services.join(', ') || 'none'})`);
      return url;
    },
    async startConsumer() {
      if (consumer) throw new Error('the consumer is already running');
      const app = await NestFactory.createMicroservice<MicroserviceOptions>(consumerModule(run.topic, deliveries, spec.metadata.read), {
        ...spec.consumer(run),
        logger,
      });
      try {
        await app.listen();
      } catch (error) {
        await app.close().catch(() => undefined);
        throw error;
      }
      consumer = app;
    },
    async stopConsumer() {
      const app = consumer;
      consumer = undefined;
      await app?.close();
    },
  };
  return run;
}

function outboxOptions(token: string | symbol, topic: string, extra: Partial<OutboxModuleOptions> = {}): OutboxModuleOptions {
  return {
    transport: token,
    resolveTopic: () => topic,
    pollIntervalMs: 200,
    backoff: { initialMs: 200, maxMs: 1_000, jitter: 0 },
    publishTimeoutMs: 3_000,
    leaseMs: 10_000,
    // The outage tests keep a broker away for several seconds of 1 s retries: rows must not go dead meanwhile.
    maxAttempts: 1_000,
    ...extra,
  };
}

/** The producing app: SQLite outbox + the spec's client + OutboxModule (no consumer in it). */
async function startProducer(spec: TransportSpec, run: TransportRun, logger: CapturingLogger, extra: Partial<OutboxModuleOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), `outbox-${spec.name}-`));
  const producer = spec.producer(run);
  const custom = isCustomProducer(producer) ? producer : undefined;
  const token = custom ? custom.token : (producer as ClientProviderOptions).name;
  const module = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        type: 'better-sqlite3',
        database: join(dir, 'outbox.sqlite'),
        entities: PARCEL_ENTITIES,
        autoLoadEntities: true,
        synchronize: true,
        migrations: [CreateOutboxTable],
        migrationsRun: true,
        retryAttempts: 0,
      }),
      ...(custom ? (custom.imports ?? []) : [ClientsModule.register([producer as ClientProviderOptions])]),
      OutboxModule.forRoot(outboxOptions(token as string | symbol, run.topic, extra)),
    ],
    providers: custom?.providers ?? [],
  }).compile();
  module.useLogger(logger);
  const drop = () => rmSync(dir, { recursive: true, force: true });
  try {
    await module.init();
  } catch (error) {
    await module.close().catch(() => undefined);
    drop();
    throw error;
  }
  return {
    module,
    /** The Nest client the relay publishes through (none for a custom producer). */
    client: custom ? undefined : module.get<ClientProxy>(token, { strict: false }),
    close: async () => {
      await module.close();
      drop();
    },
  };
}

/**
 * The conformance suite: the outbox publishes through `spec`'s Nest client to a real broker
 * and a Nest `@EventPattern` consumer receives every event with its envelope and metadata,
 * in order per aggregate, also across a broker outage.
 */
export function describeTransportContract(spec: TransportSpec): void {
  describe(`outbox over ${spec.name} (real broker, Nest client → @EventPattern consumer)`, () => {
    let harness: Harness | undefined;

    beforeAll(() => {
      for (const service of spec.services) requireService(service);
    });

    async function start(): Promise<Harness> {
      const deliveries = new Deliveries();
      const logger = new CapturingLogger();
      const run = await newRun(spec, deliveries, logger);
      await run.startConsumer();
      // Pub/sub drops what arrives before the subscription: start publishing once it is in place.
      if (spec.outage.probe) await probeUntilReceived(spec, run, deliveries);
      let producer: Awaited<ReturnType<typeof startProducer>>;
      try {
        producer = await startProducer(spec, run, logger);
      } catch (error) {
        await run.stopConsumer();
        throw error;
      }
      const dataSource = producer.module.get(DataSource);
      harness = {
        run,
        deliveries,
        logger,
        app: producer.module,
        client: producer.client,
        dataSource,
        cleanups: [],
        rows: () => dataSource.query(`SELECT * FROM outbox_messages ORDER BY position`),
        close: async () => {
          try {
            for (const cleanup of harness?.cleanups ?? []) await cleanup().catch(() => undefined);
            await producer.close();
          } finally {
            await run.stopConsumer();
          }
        },
      };
      return harness;
    }

    afterEach(async () => {
      const current = harness;
      harness = undefined;
      await current?.close();
    });

    const save = (h: Harness, ...parcels: Parcel[]) => h.dataSource.transaction((manager) => manager.save(parcels));

    const expectEnvelope = (h: Harness, delivery: { envelope: OutboxEnvelope; metadata: ReceivedMetadata }, row: OutboxRow, payload: unknown) => {
      const { envelope, metadata } = delivery;
      expect(envelope).toEqual({
        id: row.id,
        type: row.event_type,
        version: row.event_version,
        aggregateType: 'parcel',
        aggregateId: row.aggregate_id,
        occurredAt: row.occurred_at,
        // Absent metadata is left out of the JSON body (undefined here), never sent as null.
        correlationId: row.correlation_id ?? undefined,
        causationId: undefined,
        tenantId: undefined,
        headers: {},
        payload,
      });
      if (spec.metadata.headers === 'envelope') {
        expect(metadata.key).toBe(row.aggregate_id);
        expect(metadata.headers).toEqual(envelopeHeaders(envelope));
      } else {
        // Nothing but the body reaches the consumer: the envelope has to carry everything.
        expect(metadata.key).toBeUndefined();
        expect(metadata.headers).toEqual({});
      }
      expect(metadata.properties).toEqual(spec.metadata.expectedProperties(envelope, h.run));
    };

    it('delivers saved events with the envelope intact and the key/metadata mapped as far as the broker offers', async () => {
      const h = await start();
      const parcel = Parcel.register('first', 1_250);
      const correlationId = `corr-${h.run.suffix}`;
      parcel.recordEvent(new ParcelRelabelled(parcel.id, 'second'), { correlationId });
      await save(h, parcel);

      const received = await waitFor('both events at the consumer', () => h.deliveries.forAggregate(parcel.id).length >= 2 && h.deliveries.forAggregate(parcel.id), 20_000);
      const rows = await waitFor('both rows published', async () => {
        const all = await h.rows();
        return all.length === 2 && all.every((row) => row.status === 'published') && all;
      });
      expect(received).toHaveLength(2);
      expectEnvelope(h, received[0], rows[0], { parcelId: parcel.id, weightGrams: 1_250 });
      expectEnvelope(h, received[1], rows[1], { parcelId: parcel.id, label: 'second' });
      expect(received.map((delivery) => 'correlationId' in delivery.envelope)).toEqual([false, true]);
      expect(received[1].envelope.correlationId).toBe(correlationId);
      expect(rows.map((row) => [row.attempts, row.last_error])).toEqual([
        [1, null],
        [1, null],
      ]);
    });

    it('publishes the events of one aggregate in the order they happened, across several saves', async () => {
      const h = await start();
      const parcel = Parcel.register('v0', 10);
      const other = Parcel.register('other', 20);
      for (let version = 1; version <= 4; version++) parcel.relabel(`v${version}`);
      await save(h, parcel, other);
      parcel.relabel('v5');
      parcel.discard();
      await save(h, parcel);
      parcel.relabel('v6');
      await save(h, parcel);

      const expected = ['registered:v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'discarded', 'v6'];
      const describeEvent = (envelope: OutboxEnvelope) => {
        const payload = envelope.payload as { label?: string };
        if (envelope.type === 'parcels.parcel-registered') return 'registered:v0';
        if (envelope.type === 'parcels.parcel-discarded') return 'discarded';
        return payload.label ?? '?';
      };
      const received = await waitFor(`${expected.length} events of the parcel`, () => h.deliveries.forAggregate(parcel.id).length >= expected.length && h.deliveries.forAggregate(parcel.id), 30_000);
      expect(received.map((delivery) => describeEvent(delivery.envelope))).toEqual(expected);
      const rows = (await h.rows()).filter((row) => row.aggregate_id === parcel.id);
      expect(received.map((delivery) => delivery.envelope.id)).toEqual(rows.map((row) => row.id));
      await waitFor('the other parcel’s event', () => h.deliveries.forAggregate(other.id).length === 1);
      expect(h.deliveries.duplicates()).toBe(0);
    });

    it('keeps events pending while the broker is down and delivers them once it is back, without restarting the app or the relay', async () => {
      const h = await start();
      const broker = spec.outage.broker(h.run);
      const before = Parcel.register('before', 1);
      await save(h, before);
      await waitFor('the event saved before the outage', () => h.deliveries.forAggregate(before.id).length === 1, 20_000);

      const during = [Parcel.register('during-a', 2), Parcel.register('during-b', 3), Parcel.register('during-c', 4)];
      for (const parcel of during) parcel.relabel(`${parcel.label}-relabelled`);
      const stoppedAt = Date.now();
      await broker.stop();
      let restartedAt: number;
      let restartRequestedAt: number;
      let prober: Prober | undefined;
      try {
        if (spec.acknowledgement === 'none' && h.client) {
          // Without an acknowledgement, what the client writes before it has noticed the lost
          // connection counts as published and is gone (on TCP the write to the closed socket
          // only logs EPIPE). The outage proper starts once the client knows.
          await firstValueFrom(h.client.status.pipe(filter((status) => status !== 'connected'), timeout(20_000)));
        }
        // Saving does not depend on the broker.
        await save(h, during[0]);
        await save(h, during[1], during[2]);
        const duringIds = new Set(during.map((parcel) => parcel.id));
        const failed = await waitFor(
          'a failed attempt recorded on each aggregate’s first row',
          async () => {
            const rows = (await h.rows()).filter((row) => duringIds.has(row.aggregate_id));
            const heads = during.map((parcel) => rows.find((row) => row.aggregate_id === parcel.id)!);
            return rows.length === 6 && heads.every((row) => row.attempts >= 1 && row.last_error !== null) && rows;
          },
          20_000,
        ).catch(async (error: Error) => {
          throw new Error(`${error.message}; rows: ${JSON.stringify(await h.rows(), ['event_type', 'status', 'attempts', 'last_error'])}`);
        });
        for (const row of failed) expect(row.status).toBe('pending');
        for (const row of failed.filter((row) => row.last_error !== null)) expect(row.last_error).toMatch(spec.outage.lastError);
        // The later event of each aggregate waits behind its first one, untried: a claim may take it
        // with its head, but hands it back unsent and uncharged when the head fails.
        const behind = failed.filter((row) => row.event_type === 'parcels.parcel-relabelled');
        expect(behind.map((row) => [row.last_error, row.attempts - (row.lease_token === null ? 0 : 1)])).toEqual([
          [null, 0],
          [null, 0],
          [null, 0],
        ]);
        expect(during.flatMap((parcel) => h.deliveries.forAggregate(parcel.id))).toEqual([]);
      } finally {
        let proberError: unknown;
        try {
          if (spec.outage.delivery === 'subscribed-only') {
            // Probing from the restart on tells when the consumer is subscribed again, however
            // soon the relay gets its rows out.
            prober = new Prober(spec, h.run, h.deliveries).start();
            h.cleanups.push(() => prober!.stop());
          }
        } catch (error) {
          proberError = error;
        }
        restartRequestedAt = Date.now();
        await broker.start();
        restartedAt = Date.now();
        if (proberError) throw proberError;
      }

      if (spec.outage.restartConsumer) {
        // See the spec: this Nest consumer does not resubscribe by itself after a broker restart.
        await h.run.stopConsumer();
        await h.run.startConsumer();
      }

      const rowsOfOutage = async () => {
        const ids = new Set(during.map((parcel) => parcel.id));
        return (await h.rows()).filter((row) => ids.has(row.aggregate_id));
      };
      const allPublished = await waitFor('every row of the outage to be published', async () => {
        const rows = await rowsOfOutage();
        return rows.every((row) => row.status === 'published') && rows;
      }, 60_000);
      const publishedAt = Date.now();
      const maxAttempts = Math.max(...allPublished.map((row) => row.attempts));

      const consumerBackAt = prober ? await prober.arrival(30_000) : restartedAt;
      await prober?.stop();

      const lost = await settleDeliveries(h, allPublished, spec.outage.delivery === 'all' ? 30_000 : 3_000);
      if (spec.outage.delivery === 'all') {
        expect(lost).toEqual([]);
      } else {
        // Pub/sub keeps nothing for absent subscribers: only rows published before the consumer
        // was subscribed again may be missing. `published_at` is written just after the publish
        // (no acknowledgement to wait for); 500 ms of slack covers the settle and timer jitter.
        for (const row of lost) expect(sqliteTime(row.published_at!)).toBeLessThan(consumerBackAt + 500);
      }
      for (const row of allPublished.filter((row) => !lost.includes(row))) {
        const [first] = h.deliveries.of(row.id);
        expect(first.envelope).toMatchObject({ id: row.id, type: row.event_type, aggregateId: row.aggregate_id });
      }
      // Per-aggregate order survives the retries.
      for (const parcel of during) {
        const types = h.deliveries.forAggregate(parcel.id).map((delivery) => delivery.envelope.type);
        const firstSeen = types.filter((type, index) => types.indexOf(type) === index);
        if (!lost.some((row) => row.aggregate_id === parcel.id)) expect(firstSeen).toEqual(['parcels.parcel-registered', 'parcels.parcel-relabelled']);
      }

      // Once the consumer is back, nothing is lost on any transport.
      const after = Parcel.register('after', 5);
      await save(h, after);
      await waitFor('the event saved after the outage', () => h.deliveries.forAggregate(after.id).length >= 1, 20_000);

      const report = {
        transport: spec.name,
        outageMs: restartedAt - stoppedAt,
        // from the moment the restart was requested (the broker comes up before the script returns)
        restartMs: restartedAt - restartRequestedAt,
        allPublishedMs: publishedAt - restartRequestedAt,
        consumerBackMs: prober ? consumerBackAt - restartRequestedAt : undefined,
        maxAttempts,
        lastErrors: [...new Set(allPublished.map((row) => row.last_error))],
        delivered: allPublished.length - lost.length,
        lost: lost.length,
        duplicates: h.deliveries.duplicates(),
      };
      process.stdout.write(`[transport-contract] outage ${JSON.stringify(report)}\n`);
    });

    describe(`at startup (acknowledgement: ${spec.acknowledgement})`, () => {
      async function startOnly(extra: Partial<OutboxModuleOptions>) {
        const deliveries = new Deliveries();
        const logger = new CapturingLogger();
        const run = await newRun(spec, deliveries, logger);
        const outcome = await startProducer(spec, run, logger, extra).then(
          (producer) => ({ producer, error: undefined }),
          (error: unknown) => ({ producer: undefined, error }),
        );
        await outcome.producer?.close();
        return { ...outcome, logger };
      }

      if (spec.acknowledgement === 'none') {
        it(`warns that "${spec.name}" cannot confirm, naming it`, async () => {
          const { error, logger } = await startOnly({});
          expect(error).toBeUndefined();
          const warnings = logger.warnings('Outbox');
          expect(warnings).toEqual([expect.stringContaining(`Outbox transport "${spec.name}" cannot confirm that the broker has a message`)]);
          expect(warnings[0]).toContain('requireAcknowledgement: true');
        });

        it(`refuses to start with requireAcknowledgement: true, naming "${spec.name}"`, async () => {
          const { error, logger } = await startOnly({ requireAcknowledgement: true });
          expect(error).toBeInstanceOf(OutboxConfigurationError);
          expect((error as Error).message).toContain(`Outbox transport "${spec.name}" cannot confirm`);
          expect(logger.warnings('Outbox')).toEqual([]);
        });
      } else {
        it(`starts without an acknowledgement warning, also with requireAcknowledgement: true`, async () => {
          for (const extra of [{}, { requireAcknowledgement: true }]) {
            const { error, logger } = await startOnly(extra);
            expect(error).toBeUndefined();
            expect(logger.warnings('Outbox')).toEqual([]);
            expect(logger.entries.some((entry) => entry.context === 'Outbox' && entry.message.includes(`through ${spec.name}:`))).toBe(true);
          }
        });
      }
    });
  });
}

/**
 * Sends a probe message through an independent client every 50 ms, from `start()` on, and tells
 * when the first one reached the consumer. A Nest client refuses to emit while it is not
 * connected, so a probe that arrives was sent to the live broker: its send time is an upper
 * bound (within one interval) of the moment the consumer was subscribed again.
 */
class Prober {
  private readonly sent = new Map<string, number>();
  private client: ClientProxy | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly spec: TransportSpec,
    private readonly run: TransportRun,
    private readonly deliveries: Deliveries,
  ) {}

  start(): this {
    if (!this.spec.outage.probe) throw new Error(`${this.spec.name}: a "subscribed-only" spec needs a probe client`);
    const client = ClientProxyFactory.create(this.spec.outage.probe(this.run));
    this.client = client;
    this.running = (async () => {
      while (!this.stopped && this.firstArrival() === undefined) {
        const id = randomBytes(4).toString('hex');
        this.sent.set(id, Date.now());
        await lastValueFrom(client.emit(this.run.topic, { probe: id }), { defaultValue: undefined }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    return this;
  }

  /** Send time of the earliest probe that arrived, if any did. */
  firstArrival(): number | undefined {
    const arrived = [...this.sent].filter(([id]) => this.deliveries.probes.has(id)).map(([, sentAt]) => sentAt);
    return arrived.length > 0 ? Math.min(...arrived) : undefined;
  }

  async arrival(timeoutMs: number): Promise<number> {
    return waitFor('a probe message at the consumer', () => this.firstArrival() ?? false, timeoutMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await this.client?.close();
  }
}

/** Waits until a probe went through: from then on the consumer is subscribed. */
async function probeUntilReceived(spec: TransportSpec, run: TransportRun, deliveries: Deliveries): Promise<number> {
  const prober = new Prober(spec, run, deliveries).start();
  try {
    return await prober.arrival(30_000);
  } finally {
    await prober.stop();
  }
}

/** Waits until every row's event arrived or `graceMs` passed; returns the rows whose event did not arrive. */
async function settleDeliveries(h: Harness, rows: OutboxRow[], graceMs: number): Promise<OutboxRow[]> {
  const missing = () => rows.filter((row) => h.deliveries.of(row.id).length === 0);
  await waitFor('every published event at the consumer', () => missing().length === 0, graceMs).catch(() => undefined);
  return missing();
}
