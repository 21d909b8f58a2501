import { randomBytes, randomUUID } from 'node:crypto';
import { Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Kafka, logLevel } from 'kafkajs';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { OutboxConfigurationError, OutboxInbox, OutboxInboxModule, OutboxModule, OutboxPublisher, OutboxRelayHost } from '@nest-outbox/outbox';
import type { ConsoleSummary } from '../../libs/outbox/src/console/outbox-console.service';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { type OutgoingMessage, type SqlTransaction } from '@nest-outbox/outbox/core';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { postgresAdmin, privatePostgresSchema } from '../support/databases';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';
import type { BillingDatabase } from './examples/kysely.example';
import { inTransaction } from './examples/pg.example';
import { closeAll } from '../support/teardown';

const TOKEN = `token-${randomBytes(6).toString('hex')}`;

class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers.authorization === `Bearer ${TOKEN}`;
  }
}

/**
 * An app without TypeORM (no TypeOrmModule, no DataSource anywhere): Kysely over a pg Pool writes
 * invoices and adds their events in its own transactions; OutboxModule runs on that same pool
 * (`connection: { pool }`) and relays to the Kafka test broker, read back by a plain kafkajs consumer.
 */
describe('OutboxModule with connection, in an app without TypeORM (Kysely on PostgreSQL → Kafka)', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `billing-conn-${suffix}`;
  const brokers = requireService('kafka').split(',');
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let db: Kysely<BillingDatabase>;
  let reader: KafkaTopicReader;
  let app: INestApplication;
  let base: string;

  async function createTables(schema: string, url: string): Promise<void> {
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema });
    for (const sql of [`CREATE TABLE ${schema}.invoices (id text PRIMARY KEY, status text NOT NULL)`, ...tableDialectFor('postgres', table).createTable()]) {
      await postgresAdmin(url, sql);
    }
  }

  beforeAll(async () => {
    database = await privatePostgresSchema('conn_app');
    await createTables(database.schema, database.url);
    pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 6 });
    db = new Kysely<BillingDatabase>({ dialect: new PostgresDialect({ pool }) });
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    // A record of our own first: once the reader has it, its group is joined and reading the topic.
    const kafka = new Kafka({ clientId: `warm-${suffix}`, brokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'warm-up', value: JSON.stringify({ warmUp: true }) }] });
    await producer.disconnect();
    await waitFor('the reader to read the topic', () => reader.forKey('warm-up').length > 0, 30_000);

    @Module({
      imports: [
        ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `conn-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]),
        OutboxModule.forRoot({ connection: { pool }, transport: 'KAFKA', defaultTopic: topic, resolveTopic: () => topic, pollIntervalMs: 200 }),
        OutboxConsoleModule.forRoot({ path: 'ops/outbox', guard: BearerGuard }),
      ],
    })
    class BillingApp {}

    const moduleRef = await Test.createTestingModule({ imports: [BillingApp] }).setLogger(silentLogger).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${await app.getUrl()}/ops/outbox`.replace('[::1]', '127.0.0.1');
  });

  // The module was given the pool: it leaves it open for the app, which ends it.
  afterAll(() => closeAll(() => app?.close(), () => reader?.stop(), () => db?.destroy(), () => database?.drop()));

  it('publishes an event added in a committed Kysely transaction, with the envelope', async () => {
    const id = `inv-${randomUUID()}`;
    const outbox = app.get(OutboxPublisher);
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('invoices').values({ id, status: 'issued' }).execute();
      await outbox.add(trx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic, correlationId: 'corr-conn' });
    });
    // Nothing of TypeORM was registered: no data source to find.
    expect(() => app.get(getDataSourceToken(), { strict: false })).toThrow();
    const [record] = await waitFor('the invoice event on the topic', () => reader.forKey(id).length > 0 && reader.forKey(id), 30_000);
    expect(record.value).toMatchObject({ type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, correlationId: 'corr-conn', payload: { id } });
    expect(record.headers['outbox-aggregate-id']).toBe(id);
  });

  it('publishes nothing of a rolled-back transaction, while a later commit of the same aggregate goes through', async () => {
    const id = `inv-${randomUUID()}`;
    const outbox = app.get(OutboxPublisher);
    const event = (type: string) => ({ type, aggregateType: 'invoice', aggregateId: id, payload: { id, type } });
    const boom = new Error('the use case failed after adding its event');
    await expect(
      db.transaction().execute(async (trx) => {
        await outbox.add(trx, event('billing.invoice-voided'));
        throw boom;
      }),
    ).rejects.toBe(boom);
    await db.transaction().execute((trx) => outbox.add(trx, event('billing.invoice-reissued')));
    // The committed event was added after the rolled-back one: once it is on the topic, the other would be too.
    await waitFor('the committed event on the topic', () => reader.forKey(id).length > 0, 30_000);
    expect(reader.forKey(id).map((record) => record.value.type)).toEqual(['billing.invoice-reissued']);
    const { rows } = await pool.query('SELECT event_type FROM outbox_messages WHERE aggregate_id = $1', [id]);
    expect(rows).toEqual([{ event_type: 'billing.invoice-reissued' }]);
  });

  it('answers the stats from the same table', async () => {
    const stats = await app.get(OutboxRelayHost).stats({ fresh: true });
    expect(stats.pending).toBe(0);
    expect(stats.publishedLastHour).toBeGreaterThanOrEqual(2);
  });

  it('serves the console over HTTP behind its guard: summary and message list', async () => {
    expect((await fetch(`${base}/api/summary`)).status).toBe(403);
    const headers = { authorization: `Bearer ${TOKEN}` };
    const summary = (await (await fetch(`${base}/api/summary?fresh=true`, { headers })).json()) as ConsoleSummary;
    expect(summary.stats.publishedLastHour).toBeGreaterThanOrEqual(2);
    expect(summary.paused).toEqual([]);
    const page = (await (await fetch(`${base}/api/messages?status=published`, { headers })).json()) as { messages: Array<{ type: string }> };
    expect(page.messages.map((message) => message.type)).toEqual(expect.arrayContaining(['billing.invoice-issued', 'billing.invoice-reissued']));
  });
});

describe('OutboxModule with connection: { url }', () => {
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  const applicationName = `outbox-url-${randomBytes(4).toString('hex')}`;

  /** Connections of the module's own pool: the URL names them. */
  async function moduleConnections(): Promise<number> {
    const probe = new Pool({ connectionString: database.url, max: 1 });
    try {
      return (await probe.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName])).rows[0].n as number;
    } finally {
      await probe.end();
    }
  }

  /** The README's node-postgres transaction, on a pool of the app's own. */
  async function inPgTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const writer = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 1 });
    try {
      return await inTransaction(writer, work);
    } finally {
      await writer.end();
    }
  }

  beforeAll(async () => {
    database = await privatePostgresSchema('conn_url');
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(database.url, sql);
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('opens a pool of its own, relays on it, and closes it at shutdown', async () => {
    const published: string[] = [];
    const transport = { name: 'recording', publish: async (message: OutgoingMessage) => void published.push(message.envelope.id) };
    const url = `${database.url}?application_name=${applicationName}`;
    const moduleRef = await Test.createTestingModule({
      imports: [OutboxModule.forRoot({ connection: { url, poolSize: 3 }, schema: database.schema, transport, defaultTopic: 'billing', pollIntervalMs: 100 })],
    })
      .setLogger(silentLogger)
      .compile();
    const app = await moduleRef.init();
    try {
      const ids = await inPgTransaction((client) => app.get(OutboxPublisher).add(client, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: 'inv-url', payload: {} }));
      await waitFor('the event published by the relay on the module’s own pool', () => published.includes(ids[0]), 15_000);
      expect(await moduleConnections()).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
    await waitFor('the module’s pool closed', async () => (await moduleConnections()) === 0);
  });
});

describe('OutboxInboxModule with connection, without TypeORM (Kysely on PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let db: Kysely<BillingDatabase>;
  let app: INestApplication | undefined;

  beforeAll(async () => {
    database = await privatePostgresSchema('conn_inbox');
    pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 4 });
    db = new Kysely<BillingDatabase>({ dialect: new PostgresDialect({ pool }) });
    for (const sql of ['CREATE TABLE invoices (id text PRIMARY KEY, status text NOT NULL)', ...inboxDialectFor('postgres', 'outbox_inbox').createTable()]) await pool.query(sql);
    const moduleRef = await Test.createTestingModule({ imports: [OutboxInboxModule.forRoot({ connection: { pool }, poison: false, retentionMs: 1, pruneIntervalMs: 0 })] })
      .setLogger(silentLogger)
      .compile();
    app = await moduleRef.createNestApplication({ logger: false }).init();
  });

  afterAll(() => closeAll(() => app?.close(), () => db?.destroy(), () => database?.drop()));

  const marks = async () => (await pool.query('SELECT consumer, message_id FROM outbox_inbox ORDER BY message_id')).rows;

  it('runs the work once per message in the handler’s Kysely transaction; a rollback takes the mark with it', async () => {
    const inbox = app!.get(OutboxInbox);
    const message = { id: randomUUID() };
    const handle = (fail: boolean) =>
      db.transaction().execute((trx) =>
        inbox.processIn(trx, message, 'billing', async () => {
          await trx.insertInto('invoices').values({ id: message.id, status: 'paid' }).execute();
          if (fail) throw new Error('the handler failed');
          return 'paid';
        }),
      );
    await expect(handle(true)).rejects.toThrow('the handler failed');
    expect(await marks()).toEqual([]);
    expect(await handle(false)).toEqual({ duplicate: false, result: 'paid' });
    expect(await handle(false)).toEqual({ duplicate: true });
    expect(await marks()).toEqual([{ consumer: 'billing', message_id: message.id }]);
  });

  it('prunes old marks on its own connection', async () => {
    const inbox = app!.get(OutboxInbox);
    await db.transaction().execute((trx) => inbox.processIn(trx, randomUUID(), 'billing', () => undefined));
    await waitFor('marks older than retentionMs pruned', async () => (await inbox.pruneNow()) > 0 && (await marks()).length === 0);
    expect(await marks()).toEqual([]);
  });

  it('runs process() in a transaction of its own on the connection, which the work writes through', async () => {
    const inbox = app!.get(OutboxInbox);
    const id = randomUUID();
    const work = (tx: SqlTransaction) => tx.execute('INSERT INTO invoices (id, status) VALUES ($1, $2)', [id, 'paid']).then(() => 'paid');
    expect(await inbox.process(id, 'billing-own', work)).toEqual({ duplicate: false, result: 'paid' });
    expect(await inbox.process(id, 'billing-own', work)).toEqual({ duplicate: true });
    expect((await pool.query('SELECT status FROM invoices WHERE id = $1', [id])).rows).toEqual([{ status: 'paid' }]);
  });

  it('lets the work add an event with OutboxPublisher.add(tx) in the inbox transaction: committed with the mark, or rolled back with it', async () => {
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await pool.query(sql);
    const published: string[] = [];
    const transport = { name: 'recording', publish: async (message: OutgoingMessage) => void published.push(message.envelope.aggregateId) };
    const moduleRef = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({ connection: { pool }, schema: database.schema, transport, defaultTopic: 'billing', pollIntervalMs: 100 }),
        OutboxInboxModule.forRoot({ connection: { pool }, tableName: 'outbox_inbox', pruneIntervalMs: 0, replayPollMs: 0, poison: false }),
      ],
    })
      .setLogger(silentLogger)
      .compile();
    const both = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const [inbox, outbox] = [both.get(OutboxInbox), both.get(OutboxPublisher)];
      const [kept, dropped] = [`inv-${randomUUID()}`, `inv-${randomUUID()}`];
      const event = (aggregateId: string) => ({ type: 'billing.invoice-paid', aggregateType: 'invoice', aggregateId, payload: { aggregateId } });
      await expect(
        inbox.process(randomUUID(), 'billing-events', async (tx: SqlTransaction) => {
          await outbox.add(tx, event(dropped));
          throw new Error('the handler failed after adding');
        }),
      ).rejects.toThrow('the handler failed after adding');
      expect(await inbox.process(randomUUID(), 'billing-events', (tx: SqlTransaction) => outbox.add(tx, event(kept)).then(() => 'added'))).toEqual({ duplicate: false, result: 'added' });
      await waitFor('the committed event published', () => published.includes(kept), 10_000);
      const rows = await pool.query(`SELECT aggregate_id FROM ${database.schema}.outbox_messages WHERE aggregate_id = ANY($1)`, [[kept, dropped]]);
      expect(rows.rows).toEqual([{ aggregate_id: kept }]);
    } finally {
      await both.close();
    }
  });

  it('refuses runTransaction (TypeORM transactions) with connection, naming both options', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [OutboxInboxModule.forRoot({ connection: { pool }, runTransaction: (work) => work(undefined as never) })] })
      .setLogger(silentLogger)
      .compile()
      .catch((error: unknown) => error);
    expect(moduleRef).toBeInstanceOf(OutboxConfigurationError);
    expect(String(moduleRef)).toMatch(/"runTransaction" and "connection" exclude each other/);
  });
});
