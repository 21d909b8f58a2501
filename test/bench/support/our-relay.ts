import { ClientKafka, type ClientProxy } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import * as prom from 'prom-client';
import {
  ClientProxyTransport,
  combineObservers,
  ConfluentKafkaTransport,
  createOutboxTableMigration,
  createSqlOutboxStatsSource,
  createSqlOutboxStore,
  OUTBOX_DEFAULTS,
  OutboxMetrics,
  OutboxRelay,
  OutboxStatsReader,
  RelayActivityTracker,
  resolveMetricsOptions,
  RetryPolicy,
  type RelayObserver,
} from './outbox';
import { CountingLogger, kafkaLogLevel, postgresOptions } from './env';

export interface OurRelayOptions {
  postgresUrl: string;
  schema: string;
  table: string;
  brokers: string[];
  owner: string;
  batchSize?: number;
  /** Batches claimed and unsettled at once. Default: the module's (`OUTBOX_DEFAULTS.maxBatchesInFlight`). */
  maxBatchesInFlight?: number;
  /** Also run the library's migration for `table` (the first user of a schema does). */
  createTable?: boolean;
  /** Feed Prometheus metrics (a private registry, scraped every second as an eager Prometheus would). */
  metrics?: boolean;
  /** Claim and settle as named prepared statements. Default: the store's (`true`). */
  preparedStatements?: boolean;
  /** Publish through `ConfluentKafkaTransport` (librdkafka) instead of `ClientProxyTransport` over `ClientKafka` (kafkajs, the default). */
  kafkaClient?: 'kafkajs' | 'librdkafka';
}

/** Milliseconds spent per batch in each step of the relay loop (measured around the store and transport calls). */
export interface PhaseTimes {
  claim: number[];
  publish: number[];
  settle: number[];
}

export interface OurRelay {
  relay: OutboxRelay;
  phases: PhaseTimes;
  dataSource: DataSource;
  client: ClientKafka;
  logger: CountingLogger;
  close(): Promise<void>;
}

/**
 * The relay as P1 asks for it: `OutboxRelay` over `createSqlOutboxStore(dataSource, table)` and a
 * `ClientProxyTransport` over a Nest `ClientKafka` built outside Nest (`new ClientKafka(options)`
 * + `connect()`, the options the README registers through `ClientsModule`), with the module's
 * default settings unless `batchSize` or `maxBatchesInFlight` say otherwise.
 */
export async function createOurRelay(options: OurRelayOptions): Promise<OurRelay> {
  const dataSource = new DataSource({ ...postgresOptions(options.postgresUrl, options.schema), entities: [] });
  await dataSource.initialize();
  if (options.createTable) {
    const queryRunner = dataSource.createQueryRunner();
    try {
      await new (createOutboxTableMigration(options.table))().up(queryRunner);
    } finally {
      await queryRunner.release();
    }
  }
  const client = new ClientKafka({
    client: { clientId: `bench-${options.owner}`, brokers: options.brokers, logLevel: kafkaLogLevel() },
    producerOnlyMode: true,
    send: { acks: -1 },
  });
  await client.connect();
  const logger = new CountingLogger();
  const phases: PhaseTimes = { claim: [], publish: [], settle: [] };
  const store = createSqlOutboxStore(dataSource, options.table, { preparedStatements: options.preparedStatements });
  const transport =
    options.kafkaClient === 'librdkafka'
      ? new ConfluentKafkaTransport({ brokers: options.brokers, clientId: `bench-${options.owner}` })
      : new ClientProxyTransport(client as unknown as ClientProxy);
  store.claim = timed(store.claim.bind(store), phases.claim);
  store.markPublished = timed(store.markPublished.bind(store), phases.settle);
  // A settle that carries the next claim (PostgreSQL, with a backlog) counts as a claim.
  if (store.settleAndClaim) Reflect.set(store, 'settleAndClaim', timed(store.settleAndClaim.bind(store), phases.claim));
  if (transport.publishBatch) Reflect.set(transport, 'publishBatch', timed(transport.publishBatch.bind(transport), phases.publish));
  const metrics = options.metrics ? withMetrics(dataSource, options.table) : undefined;
  const relay = new OutboxRelay({
    store,
    transports: new Map([['default', transport]]),
    retryPolicy: new RetryPolicy(OUTBOX_DEFAULTS.maxAttempts, OUTBOX_DEFAULTS.backoff),
    owner: options.owner,
    batchSize: options.batchSize ?? OUTBOX_DEFAULTS.batchSize,
    maxBatchesInFlight: options.maxBatchesInFlight ?? OUTBOX_DEFAULTS.maxBatchesInFlight,
    leaseMs: OUTBOX_DEFAULTS.leaseMs,
    publishTimeoutMs: OUTBOX_DEFAULTS.publishTimeoutMs,
    logger,
    observer: metrics?.observer,
  });
  return {
    relay,
    phases,
    dataSource,
    client,
    logger,
    close: async () => {
      await relay.stop(1_000);
      metrics?.stop();
      if (transport instanceof ConfluentKafkaTransport) await transport.close();
      await client.close();
      await dataSource.destroy();
    },
  };
}

/** The module's metrics wiring by hand: stats reader (default refresh), activity, metrics, and a scraper. */
function withMetrics(dataSource: DataSource, table: string): { observer: RelayObserver; stop(): void } {
  const registry = new prom.Registry();
  const activity = new RelayActivityTracker();
  activity.running = true;
  const stats = new OutboxStatsReader({
    source: createSqlOutboxStatsSource(dataSource, table),
    refreshIntervalMs: 5_000,
    relayActivity: () => activity.activity(),
  });
  const metrics = new OutboxMetrics(prom, resolveMetricsOptions({ registry })!, { stats: () => stats.snapshot(), activity: () => activity.activity() });
  const scraper = setInterval(() => void registry.metrics(), 1_000);
  return { observer: combineObservers([activity, metrics]), stop: () => clearInterval(scraper) };
}

function timed<A extends unknown[], R>(call: (...args: A) => Promise<R>, into: number[]): (...args: A) => Promise<R> {
  return async (...args: A) => {
    const started = performance.now();
    try {
      return await call(...args);
    } finally {
      into.push(performance.now() - started);
    }
  };
}
