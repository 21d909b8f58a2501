// What the transport contract runs on: a test's private names, its consumer microservice and the
// deliveries it received, the producing app with the outbox, the logs they wrote, and the probes
// that tell when a consumer is subscribed again.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Module, type INestMicroservice, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BaseRpcContext, ClientProxyFactory, ClientsModule, Ctx, EventPattern, Payload, type ClientProviderOptions, type ClientProxy, type MicroserviceOptions } from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { filter, lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, type OutboxEnvelope, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { PARCEL_ENTITIES } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { isCustomProducer, type ReceivedMetadata, type TransportRun, type TransportSpec } from './transport-spec';
import { freeRestartablePort } from '../support/free-port';

export interface LogEntry {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  message: string;
  context?: string;
}

/** Collects Nest logs (set OUTBOX_TEST_LOGS=1 to also print them). */
export class CapturingLogger implements LoggerService {
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

export interface Delivery {
  envelope: OutboxEnvelope;
  metadata: ReceivedMetadata;
  receivedAt: number;
}

/** Everything the consumer microservices of one test received, across consumer restarts. */
export class Deliveries {
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

export interface OutboxRow {
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

export function consumerModule(topic: string, deliveries: Deliveries, read: (context: BaseRpcContext) => ReceivedMetadata) {
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


/** SQLite keeps UTC text ('YYYY-MM-DD HH:MM:SS.SSS'). */
export const sqliteTime = (text: string): number => Date.parse(`${text.replace(' ', 'T')}Z`);

/** The `outbox-*` headers a consumer must see for `envelope` on brokers that carry headers. */
export function envelopeHeaders(envelope: OutboxEnvelope): Record<string, string> {
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

export interface Harness {
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
export async function newRun(spec: TransportSpec, deliveries: Deliveries, logger: CapturingLogger): Promise<TransportRun> {
  // Read once: while a broker is stopped, scripts/services.sh lists it no more.
  const urls = new Map(spec.services.map((service) => [service, requireService(service)]));
  const suffix = randomBytes(5).toString('hex');
  // The TCP transport's outage stops and restarts the consumer on this port.
  const port = await freeRestartablePort();
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

export function outboxOptions(token: string | symbol, topic: string, extra: Partial<OutboxModuleOptions> = {}): OutboxModuleOptions {
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
export async function startProducer(spec: TransportSpec, run: TransportRun, logger: CapturingLogger, extra: Partial<OutboxModuleOptions> = {}) {
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
 * Sends a probe message through an independent client every 50 ms, from `start()` on, and tells
 * when the first one reached the consumer. A Nest client refuses to emit while it is not
 * connected, so a probe that arrives was sent to the live broker: its send time is an upper
 * bound (within one interval) of the moment the consumer was subscribed again.
 */
export class Prober {
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
export async function probeUntilReceived(spec: TransportSpec, run: TransportRun, deliveries: Deliveries): Promise<number> {
  const prober = new Prober(spec, run, deliveries).start();
  try {
    return await prober.arrival(30_000);
  } finally {
    await prober.stop();
  }
}

/** Waits until every row's event arrived or `graceMs` passed; returns the rows whose event did not arrive. */
export async function settleDeliveries(h: Harness, rows: OutboxRow[], graceMs: number): Promise<OutboxRow[]> {
  const missing = () => rows.filter((row) => h.deliveries.of(row.id).length === 0);
  await waitFor('every published event at the consumer', () => missing().length === 0, graceMs).catch(() => undefined);
  return missing();
}
