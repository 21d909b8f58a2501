import { randomBytes, randomUUID } from 'node:crypto';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { EventPattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, Idempotent, OutboxInbox, OutboxInboxModule, type OutboxEnvelope } from '@nest-outbox/outbox';
import type { SqlTransaction } from '@nest-outbox/outbox/core';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { poisonDialectFor } from '../../libs/outbox/src/sql/poison/poison-sql.dialect';
import { isolatedDatabase } from '../support/outbox-harness';
import type { InboxVariant } from './inbox.harness';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

const envelope = (id: string, payload: Record<string, unknown> = {}): OutboxEnvelope => ({
  id, type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId: 'o-1', occurredAt: new Date().toISOString(), headers: {}, payload,
});

const PROJECT = 'INSERT INTO poison_projection (message_id) VALUES ($1)';

/**
 * A plain Nest Kafka consumer with the inbox, fed one partition that holds poison: the bar is that
 * every valid message behind a bad one is handled within seconds and the group's offset passes it.
 * Run with TypeORM's transactions and with `connection` (a pg pool, no TypeORM in the app).
 */
describe.each<InboxVariant>(['typeorm', 'connection'])('poison messages behind a Nest Kafka consumer (%s)', (variant) => {
  /** Message ids whose handler fails while this holds them. */
  const failing = new Set<string>();
  const brokers = requireService('kafka').split(',');
  const suffix = randomBytes(5).toString('hex');
  const topic = `poison-${suffix}`;
  const groupId = `poison-group-${suffix}`;
  const handled: string[] = [];
  let app: INestMicroservice | undefined;
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>> | undefined;
  let pool: Pool | undefined;
  const query = async (sql: string) => (pool ? (await pool.query(sql)).rows : await app!.get(DataSource).query(sql)) as Record<string, unknown>[];
  let producer: Producer | undefined;
  let admin: Admin | undefined;

  @Controller()
  class Projector {
    constructor(private readonly inbox: OutboxInbox) {}

    @EventPattern<Record<string, OutboxEnvelope>>(topic)
    @Idempotent('poison-kafka.projector')
    async project(@Payload() event: OutboxEnvelope): Promise<void> {
      if (failing.has(event.id)) throw new Error(`projection of ${event.id} refused`);
      // The projection joins the inbox's transaction: TypeORM's EntityManager, or the connection's SqlTransaction.
      if (variant === 'typeorm') await this.inbox.manager<EntityManager>().query(PROJECT, [event.id]);
      else await this.inbox.manager<SqlTransaction>().execute(PROJECT, [event.id]);
      handled.push(event.id);
    }
  }

  beforeAll(async () => {
    isolated = await isolatedDatabase('postgres');
    const settings = { pruneIntervalMs: 0, replayPollMs: 0, poison: { maxAttempts: 3 } };
    const projection = 'CREATE TABLE poison_projection (n serial PRIMARY KEY, message_id text NOT NULL)';
    if (variant === 'connection') {
      const { url, schema } = isolated.options as { url: string; schema: string };
      pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 6 });
      for (const sql of [projection, ...inboxDialectFor('postgres', 'outbox_inbox').createTable(), ...poisonDialectFor('postgres', 'outbox_inbox_poison').createTable()]) await pool.query(sql);
    }
    const module = await Test.createTestingModule({
      imports:
        variant === 'connection'
          ? [OutboxInboxModule.forRoot({ ...settings, connection: { pool: pool! } })]
          : [
              TypeOrmModule.forRoot({ ...isolated.options, migrations: [CreateInboxTable, CreateInboxPoisonTable], migrationsRun: true, logging: false } as TypeOrmModuleOptions),
              OutboxInboxModule.forRoot(settings),
            ],
      controllers: [Projector],
    }).compile();
    if (variant === 'typeorm') await module.get(DataSource).query(projection);
    const kafka = new Kafka({ clientId: `poison-${suffix}`, brokers, logLevel: logLevel.NOTHING });
    producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    // The topic exists before the consumer subscribes, so it reads from the first message.
    await producer.send({ topic, messages: [{ partition: 0, value: JSON.stringify(envelope(randomUUID(), { warmUp: true })) }] });
    admin = kafka.admin();
    await admin.connect();
    app = module.createNestMicroservice<MicroserviceOptions>({
      transport: Transport.KAFKA,
      options: {
        client: { clientId: `poison-consumer-${suffix}`, brokers, logLevel: logLevel.NOTHING, retry: { initialRetryTime: 100, maxRetryTime: 500, retries: 20 } },
        consumer: { groupId, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 1_000 },
        subscribe: { fromBeginning: true },
        postfixId: '',
      },
    });
    app.useLogger(false);
    await app.listen();
    await waitFor('the warm-up message to be handled', () => handled.length === 1, 30_000);
  }, 60_000);

  afterAll(() => closeAll(() => producer?.disconnect(), () => admin?.disconnect(), () => app?.close(), () => pool?.end(), () => isolated?.drop()));

  const committed = async () => {
    const [entry] = await admin!.fetchOffsets({ groupId, topics: [topic] });
    return Number(entry.partitions.find((p) => p.partition === 0)?.offset ?? -1);
  };
  const records = () => app!.get(OutboxInbox).poison!.list({ consumer: 'poison-kafka.projector', limit: 50 });

  it('handles every valid message behind ones that are not envelopes or carry a NUL in their id, within seconds, and commits past them', async () => {
    const valid: string[] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const nulId: string = `${randomUUID()}\u0000`;
    const values = [
      JSON.stringify(envelope(valid[0])),
      'not json, not an envelope',
      JSON.stringify(envelope(valid[1])),
      JSON.stringify(envelope(nulId)),
      JSON.stringify(envelope(valid[2])),
      JSON.stringify(envelope(valid[3])),
    ];
    const start = Date.now();
    const [{ baseOffset }] = await producer!.send({ topic, messages: values.map((value) => ({ partition: 0, value })) });
    await waitFor('the four valid messages to be handled', () => valid.every((id) => handled.includes(id)), 10_000);
    const elapsed = Date.now() - start;
    expect(elapsed).toBeLessThan(5_000);
    expect(handled.filter((id) => valid.includes(id))).toEqual(valid);
    await waitFor('the committed offset to pass the six messages', async () => (await committed()) >= Number(baseOffset) + 6, 10_000);
    const reasons = (await records()).map((record) => record.reason);
    expect(reasons).toEqual(
      expect.arrayContaining(['not an outbox envelope: got a string', expect.stringMatching(/^no valid message id: "id" contains a control character \(.*\\u0000\)$/)]),
    );
    const projected = await query('SELECT count(*)::int AS n FROM poison_projection');
    expect(projected[0].n).toBe(5); // the warm-up and the four valid ones
  });

  it('sets aside a message whose handler fails maxAttempts times, moves the partition on, and replays it', async () => {
    const poison = randomUUID();
    const after = randomUUID();
    failing.add(poison);
    const [{ baseOffset }] = await producer!.send({ topic, messages: [poison, after].map((id) => ({ partition: 0, value: JSON.stringify(envelope(id)) })) });
    await waitFor('the message behind the failing one to be handled', () => handled.includes(after), 15_000);
    const record = await app!.get(OutboxInbox).poison!.get('poison-kafka.projector', poison);
    expect(record).toMatchObject({ state: 'set-aside', attempts: 3, reason: `handler failed: projection of ${poison} refused`, messageId: poison });
    await waitFor('the committed offset to pass both', async () => (await committed()) >= Number(baseOffset) + 2, 10_000);
    expect(handled).not.toContain(poison);

    failing.delete(poison);
    await app!.get(OutboxInbox).poison!.replay('poison-kafka.projector', poison);
    expect(handled).toContain(poison);
    await expect(app!.get(OutboxInbox).poison!.get('poison-kafka.projector', poison)).rejects.toThrow(/No poison record/);
  });

  it('applies a duplicate delivery once and commits past it', async () => {
    const id = randomUUID();
    const value = JSON.stringify(envelope(id));
    const [{ baseOffset }] = await producer!.send({ topic, messages: [value, value, value].map((v) => ({ partition: 0, value: v })) });
    await waitFor('the committed offset to pass the three deliveries', async () => (await committed()) >= Number(baseOffset) + 3, 10_000);
    expect(handled.filter((handledId) => handledId === id)).toEqual([id]);
    expect(await query(`SELECT count(*)::int AS n FROM poison_projection WHERE message_id = '${id}'`)).toEqual([{ n: 1 }]);
  });
});
