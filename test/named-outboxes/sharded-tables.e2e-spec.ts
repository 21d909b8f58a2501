import { randomBytes } from 'node:crypto';
import { Module, type INestApplication } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { Pool } from 'pg';
import { OutboxModule } from '@nest-outbox/outbox';
import { ShardedOutboxPublisher } from '@nest-outbox/outbox/tenants';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin, postgresRows, privatePostgresSchema } from '../support/databases';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

const SHARDS = ['orders_0', 'orders_1', 'orders_2'];
const ORDERS = Symbol('ORDERS_OUTBOX');

/**
 * One outbox table split in three in one PostgreSQL schema, a named outbox and relay per table, and
 * a ShardedOutboxPublisher that writes each event to its aggregate's table, in the caller's one
 * transaction; everything relayed to one topic of the Kafka test broker.
 */
describe('sharded outbox tables: one transaction, each aggregate in its own shard', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `sharded-${suffix}`;
  const brokers = requireService('kafka').split(',');
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let reader: KafkaTopicReader;
  let app: INestApplication;
  let sharded: ShardedOutboxPublisher;

  /** Adds `events` per aggregate, interleaved, in one transaction; rolls back when told to. */
  async function write(aggregates: string[], events: number, rollback = false): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const messages = Array.from({ length: events }, (_, step) => aggregates.map((aggregateId) => ({ type: 'orders.step', aggregateType: 'order', aggregateId, payload: { aggregateId, step } }))).flat();
      const ids = await sharded.add(client, messages);
      expect(new Set(ids).size).toBe(messages.length);
      await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
    } finally {
      client.release();
    }
  }

  const rowsOf = async (shard: number) =>
    (await postgresRows(database.url, `SELECT DISTINCT aggregate_id AS id FROM ${database.schema}.outbox_${shard}`)).map((row) => String(row.id));

  beforeAll(async () => {
    database = await privatePostgresSchema('sharded');
    for (let shard = 0; shard < SHARDS.length; shard++) {
      for (const sql of tableDialectFor('postgres', OutboxTable.on('postgres', { tableName: `outbox_${shard}`, schema: database.schema })).createTable()) await postgresAdmin(database.url, sql);
    }
    pool = new Pool({ connectionString: database.url, max: 10 });
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();

    @Module({
      imports: [
        ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `sharded-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]),
        ...SHARDS.map((name, shard) =>
          OutboxModule.forRoot({ name, connection: { pool }, tableName: `outbox_${shard}`, schema: database.schema, transport: 'KAFKA', resolveTopic: () => topic, pollIntervalMs: 200 }),
        ),
      ],
      providers: [ShardedOutboxPublisher.provide(ORDERS, SHARDS)],
    })
    class ShardedApp {}
    const moduleRef = await Test.createTestingModule({ imports: [ShardedApp] }).setLogger(silentLogger).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    sharded = app.get<ShardedOutboxPublisher>(ORDERS);
  }, 60_000);

  afterAll(() => closeAll(() => app?.close(), () => reader?.stop(), () => pool?.end(), () => database?.drop()));

  it('writes each aggregate\'s events to one shard, the one shardFor names, and publishes them in order', async () => {
    const aggregates = Array.from({ length: 30 }, (_, i) => `order-${suffix}-${i}`);
    await write(aggregates, 4);
    await waitFor('every event on the topic', () => aggregates.every((id) => reader.forKey(id).length >= 4), 30_000);
    for (const id of aggregates) expect({ id, steps: reader.forKey(id).map((record) => (record.value.payload as { step: number }).step) }).toEqual({ id, steps: [0, 1, 2, 3] });
    const stored = await Promise.all(SHARDS.map((_, shard) => rowsOf(shard)));
    for (const id of aggregates) {
      const holders = stored.flatMap((ids, shard) => (ids.includes(id) ? [SHARDS[shard]] : []));
      expect({ id, holders }).toEqual({ id, holders: [sharded.shardFor(id)] });
    }
    // Thirty aggregates over three shards: every table got some.
    expect(stored.map((ids) => ids.length > 0)).toEqual([true, true, true]);
  });

  it('writes nothing to any shard when the transaction rolls back', async () => {
    const aggregates = Array.from({ length: 9 }, (_, i) => `rolled-${suffix}-${i}`);
    await write(aggregates, 2, true);
    const stored = (await Promise.all(SHARDS.map((_, shard) => rowsOf(shard)))).flat();
    expect(stored.filter((id) => id.startsWith('rolled-'))).toEqual([]);
  });

  it('refuses a shard list that cannot place aggregates for good', () => {
    expect(() => ShardedOutboxPublisher.provide('X', ['orders_0'])).toThrow('two or more distinct outbox names');
    expect(() => ShardedOutboxPublisher.provide('X', ['orders_0', 'orders_0'])).toThrow('two or more distinct outbox names');
    expect(() => ShardedOutboxPublisher.provide('X', ['orders_0', 'Orders-1'])).toThrow('"shards[1]"');
  });
});
