import { randomBytes } from 'node:crypto';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { Kafka, logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { CreateOutboxTable, InjectOutbox, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { OutboxStats } from '@nest-outbox/outbox/observability';
import type { ConsoleSummary } from '../../libs/outbox/src/console/outbox-console.service';
import { privateMariaDbDatabase } from '../support/databases';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { sampleValue } from '../support/prometheus-text';
import { PrivatePostgres } from '../support/private-postgres';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { staysAtMostAfterGrace, waitFor } from '../support/wait-for';
import { Crate } from './crate.fixtures';

type Depot = 'eu' | 'us' | 'apac' | 'latam';
const DEPOTS: readonly Depot[] = ['eu', 'us', 'apac', 'latam'];

/** Reads the other outboxes' figures by name, as an app's own service would. */
@Injectable()
class DepotReports {
  constructor(
    @InjectOutbox(OutboxStats, 'apac') readonly apacStats: OutboxStats,
    @InjectOutbox(OutboxStats, 'us') readonly usStats: OutboxStats,
    @InjectOutbox(OutboxPublisher, 'eu') readonly euPublisher: OutboxPublisher,
    @InjectOutbox(OutboxPublisher, 'latam') readonly latamPublisher: OutboxPublisher,
  ) {}
}

/**
 * One app, four outboxes, four databases: three PostgreSQL servers of the test's own (eu and apac
 * in the table mode, us in the WAL mode) and a MariaDB database (latam), each captured from its own
 * TypeORM data source and relayed to its own topic on the Kafka test broker. Each outbox publishes
 * its own events in order; while the us server is down the others go on, and us catches up once it
 * is back, with nothing lost.
 */
describe('several outboxes in one app: three PostgreSQL servers and a MariaDB database', () => {
  const suffix = randomBytes(4).toString('hex');
  const brokers = requireService('kafka').split(',');
  const topic = (depot: Depot) => `depots-${depot}-${suffix}`;
  const registry = new Registry();
  const servers = new Map<Depot, PrivatePostgres>();
  const readers = new Map<Depot, KafkaTopicReader>();
  const saved = new Map<Depot, Map<string, number>>(DEPOTS.map((depot) => [depot, new Map()]));
  let maria: Awaited<ReturnType<typeof privateMariaDbDatabase>>;
  let app: INestApplication;
  let base: string;

  const urlOf = (depot: Depot) => (depot === 'latam' ? maria.url : servers.get(depot)!.url());
  const dataSource = (depot: Depot) => app.get<DataSource>(getDataSourceToken(depot));

  /** Saves `count` new crates at the depot and moves each `moves` times more, one save per event. */
  async function ship(depot: Depot, count: number, moves: number): Promise<void> {
    const repository = dataSource(depot).getRepository(Crate);
    const crates = Array.from({ length: count }, () => Crate.at(depot));
    await Promise.all(crates.map((crate) => repository.save(crate)));
    for (let move = 0; move < moves; move++) {
      for (const crate of crates) {
        crate.move();
        await repository.save(crate);
      }
    }
    for (const crate of crates) saved.get(depot)!.set(crate.id, crate.steps);
  }

  /** The steps each crate's events brought, in the order they were read, repeats included. */
  function arrived(depot: Depot): Map<string, number[]> {
    const steps = new Map<string, number[]>();
    for (const record of readers.get(depot)!.records) {
      const payload = (record.value as { payload?: { crateId: string; step: number } }).payload;
      if (payload) steps.set(payload.crateId, [...(steps.get(payload.crateId) ?? []), payload.step]);
    }
    return steps;
  }

  /** Each step once, where it was first read: what a consumer that skips repeats sees. */
  const firstArrivals = (depot: Depot) => new Map([...arrived(depot)].map(([crate, steps]) => [crate, [...new Set(steps)]]));
  const repeats = (depot: Depot) => [...arrived(depot).values()].reduce((sum, steps) => sum + steps.length - new Set(steps).size, 0);
  const savedEvents = (depot: Depot) => [...saved.get(depot)!.values()].reduce((a, b) => a + b, 0);

  const allArrived = (depot: Depot) => {
    const got = firstArrivals(depot);
    return [...saved.get(depot)!].every(([crate, steps]) => (got.get(crate)?.length ?? 0) >= steps);
  };

  /**
   * Every saved step of the depot's crates in order, and no repeat beyond `repeatsAllowed`, still so
   * after the grace period (a late copy would come after the first look). 0 where nothing failed.
   */
  async function expectInOrderAndComplete(depot: Depot, repeatsAllowed = 0): Promise<void> {
    await staysAtMostAfterGrace(`repeated events on ${depot}'s topic`, () => repeats(depot), repeatsAllowed);
    const got = repeatsAllowed === 0 ? arrived(depot) : firstArrivals(depot);
    for (const [crate, steps] of saved.get(depot)!) {
      expect({ crate, steps: got.get(crate) }).toEqual({ crate, steps: Array.from({ length: steps }, (_, i) => i + 1) });
    }
    // Only this depot's crates on its topic: no outbox published another's events.
    expect([...got.keys()].filter((crate) => !saved.get(depot)!.has(crate))).toEqual([]);
  }

  beforeAll(async () => {
    const [eu, us, apac] = await Promise.all([PrivatePostgres.start('named-eu'), PrivatePostgres.start('named-us'), PrivatePostgres.start('named-apac')]);
    servers.set('eu', eu).set('us', us).set('apac', apac);
    maria = await privateMariaDbDatabase('named_latam');

    const producer = new Kafka({ clientId: `warm-${suffix}`, brokers, logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    for (const depot of DEPOTS) {
      const reader = new KafkaTopicReader(brokers, topic(depot));
      readers.set(depot, reader);
      await producer.send({ topic: topic(depot), messages: [{ key: 'warm-up', value: JSON.stringify({ warmUp: true }) }] });
      await reader.start();
    }
    await producer.disconnect();
    await waitFor('every reader to read its topic', () => DEPOTS.every((depot) => readers.get(depot)!.forKey('warm-up').length > 0), 60_000);

    const database = (depot: Depot) =>
      TypeOrmModule.forRoot({
        name: depot, type: depot === 'latam' ? 'mariadb' : 'postgres', url: urlOf(depot),
        entities: [Crate], synchronize: true, migrations: [CreateOutboxTable], migrationsRun: true, extra: depot === 'latam' ? {} : { max: 6 },
      });
    const outbox = (depot: Depot) =>
      OutboxModule.forRoot({
        name: depot, dataSource: depot, delivery: depot === 'us' ? 'wal' : 'table',
        transport: 'KAFKA', resolveTopic: () => topic(depot), pollIntervalMs: 200, backoff: { initialMs: 200, maxMs: 1_000 }, metrics: { registry },
      });

    @Module({
      imports: [
        ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `depots-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]),
        ...DEPOTS.map(database),
        ...DEPOTS.map(outbox),
        OutboxConsoleModule.forRoot({ path: 'ops/eu', outbox: 'eu', noAuth: true }),
        OutboxConsoleModule.forRoot({ path: 'ops/latam', outbox: 'latam', noAuth: true }),
      ],
      providers: [DepotReports],
    })
    class DepotsApp {}

    const moduleRef = await Test.createTestingModule({ imports: [DepotsApp] }).setLogger(silentLogger).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    for (const reader of readers.values()) await reader.stop();
    await Promise.all([...servers.values()].map((server) => server.cleanup()));
    await maria?.drop();
  }, 90_000);

  it('publishes each outbox\'s events to its own topic, each crate\'s in order', async () => {
    await Promise.all(DEPOTS.map((depot) => ship(depot, 5, 3)));
    await waitFor('every depot\'s events on its topic', () => DEPOTS.every(allArrived), 60_000);
    await Promise.all(DEPOTS.map((depot) => expectInOrderAndComplete(depot)));
  }, 90_000);

  it('goes on publishing from the other databases while the us server is down; us catches up when it is back, nothing lost', async () => {
    const us = servers.get('us')!;
    await ship('us', 5, 2);
    // The us stream may publish again what it had not confirmed when its server went down: at most the events saved before.
    const usRepeatsAllowed = repeats('us') + 5 * 3;
    await us.end('immediate');
    try {
      const others: Depot[] = ['eu', 'apac', 'latam'];
      await Promise.all(others.map((depot) => ship(depot, 5, 2)));
      // Published while the us server is still down.
      await waitFor('the other depots\' new events while us is down', () => others.every(allArrived), 60_000);
      await expect(ship('us', 1, 0)).rejects.toThrow();
    } finally {
      await us.begin();
    }
    await waitFor('the us data source to answer again', async () => (await dataSource('us').query('SELECT 1').then(() => true, () => false)), 60_000);
    await ship('us', 5, 2);
    await waitFor('every us event, before and after the outage', () => allArrived('us'), 90_000);
    await Promise.all(DEPOTS.map((depot) => expectInOrderAndComplete(depot, depot === 'us' ? usRepeatsAllowed : 0)));
  }, 240_000);

  it('labels each outbox\'s metrics with its name, and serves each its own stats and console', async () => {
    const text = await registry.metrics();
    for (const depot of DEPOTS) {
      // Exact where nothing failed; us may count again what its stream published again after the outage.
      const published = sampleValue(text, 'outbox_messages_published_total', { outbox: depot, destination: topic(depot) });
      if (depot === 'us') expect({ depot, atLeastSaved: (published ?? 0) >= savedEvents(depot) }).toEqual({ depot, atLeastSaved: true });
      else expect({ depot, published }).toEqual({ depot, published: savedEvents(depot) });
      expect(sampleValue(text, 'outbox_relay_up', { outbox: depot })).toBe(1);
    }
    expect(sampleValue(text, 'outbox_wal_slot_active', { outbox: 'us', slot: 'outbox_us_outbox_messages' })).toBe(1);
    // Each name gives that outbox's stats: us streams its slot, apac has none.
    const reports = app.get(DepotReports);
    expect((await reports.usStats.snapshot()).wal).toMatchObject({ slot: 'outbox_us_outbox_messages', active: true });
    expect((await reports.apacStats.snapshot()).wal).toBeUndefined();
    expect(reports.euPublisher).not.toBe(reports.latamPublisher);

    const summary = async (depot: Depot) => (await (await fetch(`${base}/ops/${depot}/api/summary?fresh=true`)).json()) as ConsoleSummary;
    const [eu, latam] = await Promise.all([summary('eu'), summary('latam')]);
    expect(eu.throughput.reduce((sum, point) => sum + point.published, 0)).toBe(savedEvents('eu'));
    expect(latam.throughput.reduce((sum, point) => sum + point.published, 0)).toBe(savedEvents('latam'));
    expect(await (await fetch(`${base}/ops/eu`)).text()).toContain('<span id="outbox-name">eu</span>');
  });
});
