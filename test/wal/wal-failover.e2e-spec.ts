import { randomBytes } from 'node:crypto';
import type { LoggerService } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { postgresAdmin, postgresRows } from '../support/databases';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { PostgresStandby } from '../support/postgres-standby';
import { privateKafka, type PrivateKafka } from '../support/private-kafka';
import { PrivatePostgres } from '../support/private-postgres';
import { SwitchingProxy } from '../support/switching-proxy';
import { waitFor } from '../support/wait-for';
import type { WalApp } from '../support/wal.harness';

const SCHEMA = 'wal_failover';
const SLOT = 'wal_failover_slot';
const AGGREGATES = 10;
// One transaction per tick: about 100 a second.
const TICK_MS = 10;

/** An app in the WAL mode (write 'row') publishing to a topic, with what it logged as warnings and errors. */
interface FailoverApp extends WalApp {
  logged: string[];
}

/**
 * Starts an app on a server that already has the schema (made here on the primary, replicated to the
 * standby): the harness's walSandbox creates its schema, which a promoted standby has already.
 */
async function startApp(url: string, kafka: PrivateKafka, topic: string): Promise<FailoverApp> {
  const logged: string[] = [];
  const logger: LoggerService = { log: () => undefined, error: (message: unknown) => void logged.push(`error: ${String(message)}`), warn: (message: unknown) => void logged.push(String(message)) };
  const module = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url, schema: SCHEMA, extra: { options: `-c search_path=${SCHEMA}` }, migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0, logging: false }),
      ClientsModule.register([
        { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `failover-${topic}`, brokers: [kafka.address] }, producerOnlyMode: true, send: { acks: -1 } } },
      ]),
      OutboxModule.forRoot({
        delivery: 'wal',
        wal: { write: 'row', slotName: SLOT },
        transport: 'KAFKA',
        resolveTopic: () => topic,
        pollIntervalMs: 200,
        batchSize: 50,
        publishTimeoutMs: 2_000,
        backoff: { initialMs: 100, maxMs: 500 },
        // An app closed while its server is gone gives up on its batch in flight sooner.
        shutdownTimeoutMs: 2_000,
      }),
    ],
  }).compile();
  module.useLogger(logger);
  let closed = false;
  const app: FailoverApp = {
    module,
    dataSource: module.get(DataSource),
    publisher: module.get(OutboxPublisher),
    logged,
    close: async () => {
      if (closed) return;
      closed = true;
      await module.close();
    },
  };
  await module.init().catch(async (error: unknown) => {
    await within(app.close(), 10_000);
    throw error;
  });
  return app;
}

/** Waits for `work` at most `ms` and resolves either way: a close that fails or hangs on a server that is gone. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([work.catch(() => undefined), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Writes numbered events on AGGREGATES aggregates, one transaction each, about 100 a second, and
 * keeps the ids of those that committed. A write that fails (a connection cut by the failover) did
 * not commit as far as the app knows: skipped, and its number is not used again.
 */
class NumberedWrites {
  readonly committed = new Map<string, { aggregate: string; seq: number }>();
  private written = 0;
  private readonly seqs = new Array<number>(AGGREGATES).fill(0);

  constructor(private readonly topic: string) {}

  async for(app: WalApp, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const started = Date.now();
      const index = this.written++ % AGGREGATES;
      const aggregate = `agg-${index}`;
      const seq = ++this.seqs[index];
      try {
        const event = { type: 'failover.noted', aggregateType: 'failover', aggregateId: aggregate, payload: { aggregate, seq }, topic: this.topic };
        const [id] = await app.dataSource.transaction((manager) => app.publisher.add(manager, event));
        this.committed.set(id, { aggregate, seq });
      } catch {
        // Not committed: nothing to find on the topic.
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, TICK_MS - (Date.now() - started))));
    }
  }
}

describe("WAL delivery mode (write 'row'): a failover to a promoted standby while the stream is behind loses nothing", () => {
  let primary: PrivatePostgres | undefined;
  let standby: PostgresStandby | undefined;
  let kafka: PrivateKafka | undefined;
  let reader: KafkaTopicReader | undefined;
  let proxy: SwitchingProxy | undefined;
  let topic: string;
  let writes: NumberedWrites;
  const apps: FailoverApp[] = [];

  beforeEach(async () => {
    // One at a time: if one fails to start, the other is already known to afterEach.
    primary = await PrivatePostgres.start('failover');
    kafka = await privateKafka();
    await postgresAdmin(primary.url(), `CREATE SCHEMA ${SCHEMA}`);
    standby = await PostgresStandby.of(primary);
    topic = `failover-${randomBytes(4).toString('hex')}`;
    writes = new NumberedWrites(topic);
    reader = new KafkaTopicReader([kafka.address], topic);
    await reader.start();
  }, 60_000);

  afterEach(async () => {
    // The broker may still be down if the test failed midway: the reader's and apps' closes wait for it otherwise.
    await kafka?.start();
    for (const app of apps.splice(0)) await within(app.close(), 10_000);
    await within(reader?.stop() ?? Promise.resolve(), 10_000);
    await proxy?.close();
    await Promise.all([standby?.cleanup(), primary?.cleanup(), kafka?.remove()]);
    reader = proxy = standby = primary = kafka = undefined;
  }, 60_000);

  const start = async (url: string) => {
    const app = await startApp(url, kafka!, topic);
    apps.push(app);
    return app;
  };

  /** Writes while the broker is up until the stream has published and saved a position: the slot then has a past to lose. */
  const streamForAWhile = async (app: FailoverApp) => {
    await writes.for(app, 1_000);
    await waitFor('the first events on the topic', () => allPublished(reader!, writes), 20_000);
    await waitFor('the stream to save its position', async () => (await postgresRows(primary!.url(), `SELECT 1 FROM ${SCHEMA}.outbox_messages_wal_positions WHERE slot_name = '${SLOT}'`)).length > 0);
  };

  /** The broker away, the stream falls behind; then the primary goes and the standby takes over, with everything committed. */
  const failOverBehind = async (app: FailoverApp) => {
    await kafka!.stop();
    await writes.for(app, 2_000);
    await standby!.caughtUp();
    await primary!.end('fast');
    await standby!.promote();
    await kafka!.start();
  };

  const expectNothingLostInOrder = async (app: FailoverApp) => {
    await writes.for(app, 2_000);
    // Past the deadline the assertion below names what is missing, which a timeout would not.
    await waitFor('every committed event on the topic', () => allPublished(reader!, writes), 30_000).catch(() => undefined);
    expect(lostEvents(reader!, writes)).toEqual([]);
    for (let index = 0; index < AGGREGATES; index++) {
      const seqs = firstAppearances(reader!, `agg-${index}`);
      expect({ aggregate: `agg-${index}`, seqs }).toEqual({ aggregate: `agg-${index}`, seqs: [...seqs].sort((a, b) => a - b) });
    }
    // The rows the lost slot held went to the table relay: the stream was behind, so there were some.
    const handedOver = app.logged.map((line) => slotGoneWarning.exec(line)).find(Boolean);
    if (!handedOver) throw new Error(`The app did not log that the slot was gone and its rows went to the table relay; it logged:\n${app.logged.join('\n')}`);
    expect(Number(handedOver[1])).toBeGreaterThan(0);
  };

  it('an app started on the new primary hands what the old slot had not published to the table relay', async () => {
    const old = await start(primary!.url());
    await streamForAWhile(old);
    await failOverBehind(old);
    // Its server is gone: its close may fail or wait for it, so it gets a deadline and the test goes on either way.
    await within(old.close(), 10_000);
    const app = await start(standby!.url());
    await expectNothingLostInOrder(app);
  }, 90_000);

  it('an app left running while its connection moves to the new primary does the same', async () => {
    proxy = await SwitchingProxy.start(primary!.url());
    const app = await start(proxy.url);
    await streamForAWhile(app);
    await failOverBehind(app);
    proxy.switchTo(standby!.url());
    await expectNothingLostInOrder(app);
  }, 90_000);
});

const slotGoneWarning = new RegExp(
  `replication slot "${SLOT}" was gone after the stream had published up to [0-9A-F]+/[0-9A-F]+; a new slot starts at [0-9A-F]+/[0-9A-F]+\\. (\\d+) row\\(s\\) it had not published went to the table relay`,
);

function publishedIds(reader: KafkaTopicReader): Set<string> {
  return new Set(reader.records.map((record) => record.headers['outbox-message-id']));
}

function allPublished(reader: KafkaTopicReader, writes: NumberedWrites): boolean {
  const published = publishedIds(reader);
  return [...writes.committed.keys()].every((id) => published.has(id));
}

/** Committed events that never reached the topic, with their aggregate and number. */
function lostEvents(reader: KafkaTopicReader, writes: NumberedWrites): Array<{ id: string; aggregate: string; seq: number }> {
  const published = publishedIds(reader);
  return [...writes.committed].filter(([id]) => !published.has(id)).map(([id, event]) => ({ id, ...event }));
}

/** An aggregate's event numbers in the order each first reached the topic (a redelivery comes later and is no disorder). */
function firstAppearances(reader: KafkaTopicReader, aggregate: string): number[] {
  const seen = new Set<number>();
  for (const record of reader.forKey(aggregate)) seen.add((record.value.payload as { seq: number }).seq);
  return [...seen];
}
