import { randomBytes, randomUUID } from 'node:crypto';
import { Controller, type INestApplication, type INestMicroservice } from '@nestjs/common';
import { ClientsModule, Ctx, EventPattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { CloudEvent, Kafka as CloudEventsKafka } from 'cloudevents';
import { Kafka, logLevel, type Consumer, type KafkaMessage, type Producer } from 'kafkajs';
import { Pool } from 'pg';
import { Idempotent, OutboxEvent, OutboxInbox, OutboxInboxModule, OutboxModule, OutboxPublisher, toOutboxEvent, type OutboxEnvelope } from '@nest-outbox/outbox';
import type { SqlTransaction } from '@nest-outbox/outbox/core';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { poisonDialectFor } from '../../libs/outbox/src/sql/poison/poison-sql.dialect';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin, privatePostgresSchema } from '../support/databases';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

@OutboxEvent('shop.order-placed', { version: 2 })
class OrderPlaced {
  orderId!: string;
  total!: number;
}

/** A consumer written with the cloudevents SDK alone: kafkajs reads, `Kafka.toEvent` decodes. No code of the outbox. */
class SdkOnlyConsumer {
  readonly events = new Map<string, CloudEvent<unknown>>();
  readonly raw = new Map<string, KafkaMessage>();
  private consumer: Consumer | undefined;

  constructor(private readonly brokers: string[]) {}

  async start(topics: string[]): Promise<void> {
    const kafka = new Kafka({ clientId: `ce-sdk-${randomBytes(3).toString('hex')}`, brokers: this.brokers, logLevel: logLevel.NOTHING });
    this.consumer = kafka.consumer({ groupId: `ce-sdk-${randomBytes(5).toString('hex')}`, maxWaitTimeInMs: 100, sessionTimeout: 6_000, rebalanceTimeout: 6_000, heartbeatInterval: 1_000 });
    await this.consumer.connect();
    await this.consumer.subscribe({ topics, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message }) => {
        // The SDK's Kafka binding takes string headers; kafkajs hands Buffers.
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]));
        const value = message.value?.toString() ?? '';
        const received = { key: message.key?.toString(), headers, value, body: value };
        if (!CloudEventsKafka.isEvent(received)) return;
        const event = CloudEventsKafka.toEvent(received) as CloudEvent<unknown>;
        this.events.set(event.id, event);
        this.raw.set(event.id, message);
      },
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}

/**
 * The outbox publishes through Nest's Kafka client to a binary and a structured CloudEvents
 * destination (and one left in the outbox format), on the real test broker; a consumer with the SDK
 * alone reads every attribute, and the inbox (called directly, and behind a Nest Kafka consumer with
 * `@Idempotent()`) applies each event once.
 */
describe('CloudEvents on Kafka: binary and structured destinations', () => {
  const suffix = randomBytes(4).toString('hex');
  const binaryTopic = `ce-binary-${suffix}`;
  const structuredTopic = `ce-structured-${suffix}`;
  const outboxTopic = `ce-outbox-${suffix}`;
  const brokers = requireService('kafka').split(',');
  const nestHandled: Array<{ id: string; payload: unknown }> = [];
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let app: INestApplication;
  let consumerApp: INestMicroservice;
  let sdkConsumer: SdkOnlyConsumer;
  let producer: Producer;

  @Controller()
  class BinaryProjector {
    @EventPattern(binaryTopic)
    @Idempotent('cloudevents.binary-projector')
    async project(@Payload() payload: unknown, @Ctx() context: unknown): Promise<void> {
      // The payload of a binary event is the data alone; its id is in the ce_id header (warm-up records are outbox envelopes).
      const headers = (context as { getMessage(): { headers?: Record<string, unknown> } }).getMessage().headers ?? {};
      nestHandled.push({ id: headers.ce_id !== undefined ? String(headers.ce_id) : (payload as OutboxEnvelope).id, payload });
    }
  }

  async function add(messages: Parameters<OutboxPublisher['add']>[0]): Promise<string[]> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const ids = await app.get(OutboxPublisher).add(client, messages as never);
      await client.query('COMMIT');
      return ids;
    } finally {
      client.release();
    }
  }

  beforeAll(async () => {
    database = await privatePostgresSchema('cloudevents');
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(database.url, sql);
    pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 8 });
    for (const sql of [...inboxDialectFor('postgres', 'outbox_inbox').createTable(), ...poisonDialectFor('postgres', 'outbox_inbox_poison').createTable()]) await pool.query(sql);

    // The topics exist before anyone subscribes: a warm-up record in the outbox format on each.
    const kafka = new Kafka({ clientId: `ce-warm-${suffix}`, brokers, logLevel: logLevel.NOTHING });
    producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const warmUp = randomUUID();
    const warmEnvelope: OutboxEnvelope = { id: warmUp, type: 'warm-up', version: 1, aggregateType: 'test', aggregateId: 'w', occurredAt: new Date().toISOString(), headers: {}, payload: {} };
    for (const topic of [binaryTopic, structuredTopic, outboxTopic]) await producer.send({ topic, messages: [{ key: 'w', value: JSON.stringify(warmEnvelope) }] });

    sdkConsumer = new SdkOnlyConsumer(brokers);
    await sdkConsumer.start([binaryTopic, structuredTopic, outboxTopic]);

    const consumerModule = await Test.createTestingModule({
      imports: [OutboxInboxModule.forRoot({ connection: { pool }, pruneIntervalMs: 0, replayPollMs: 0 })],
      controllers: [BinaryProjector],
    }).compile();
    consumerApp = consumerModule.createNestMicroservice<MicroserviceOptions>({
      transport: Transport.KAFKA,
      options: {
        client: { clientId: `ce-consumer-${suffix}`, brokers, logLevel: logLevel.NOTHING, retry: { initialRetryTime: 100, maxRetryTime: 500, retries: 20 } },
        consumer: { groupId: `ce-nest-${suffix}`, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 1_000 },
        subscribe: { fromBeginning: true },
        postfixId: '',
      },
    });
    consumerApp.useLogger(false);
    await consumerApp.listen();
    await waitFor('the Nest consumer to handle the warm-up record', () => nestHandled.some((handled) => handled.id === warmUp), 30_000);

    const moduleRef = await Test.createTestingModule({
      imports: [
        ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `ce-${suffix}`, brokers }, producerOnlyMode: true } }]),
        OutboxModule.forRoot({
          connection: { pool },
          transport: 'KAFKA',
          pollIntervalMs: 200,
          envelope: { source: '/shop/orders', destinations: { [binaryTopic]: 'cloudevents-binary', [structuredTopic]: 'cloudevents-structured' } },
        }),
      ],
    })
      .setLogger(silentLogger)
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  }, 90_000);

  afterAll(() => closeAll(() => app?.close(), () => consumerApp?.close(), () => sdkConsumer?.stop(), () => producer?.disconnect(), () => pool?.end(), () => database?.drop()));

  const occurredAt = new Date('2026-11-26T10:11:12.345Z');
  const event = (topic: string, orderId: string) => ({
    type: 'shop.order-placed',
    version: 2,
    aggregateType: 'Order',
    aggregateId: orderId,
    topic,
    occurredAt,
    correlationId: `corr-${orderId}`,
    causationId: `cause-${orderId}`,
    tenantId: 'tenant-eu',
    headers: { 'x-request-id': `req-${orderId}` },
    payload: { orderId, total: 42.5, lines: [{ sku: 'A-1', qty: 2 }] },
  });

  it('a consumer with the SDK alone reads id, type, source, subject, time, data and the extensions, in both modes', async () => {
    const [binaryId, structuredId] = await add([event(binaryTopic, 'order-b1'), event(structuredTopic, 'order-s1')]);
    await waitFor('both CloudEvents to be read by the SDK consumer', () => sdkConsumer.events.has(binaryId) && sdkConsumer.events.has(structuredId), 20_000);
    for (const [id, orderId] of [
      [binaryId, 'order-b1'],
      [structuredId, 'order-s1'],
    ]) {
      const read = sdkConsumer.events.get(id)!;
      expect(read).toMatchObject({
        specversion: '1.0',
        id,
        type: 'shop.order-placed',
        source: '/shop/orders',
        subject: orderId,
        time: occurredAt.toISOString(),
        datacontenttype: 'application/json',
        data: { orderId, total: 42.5, lines: [{ sku: 'A-1', qty: 2 }] },
        aggregatetype: 'Order',
        correlationid: `corr-${orderId}`,
        causationid: `cause-${orderId}`,
        tenantid: 'tenant-eu',
      });
      // A header value is a string in binary mode, the JSON number in structured mode.
      expect(String(read.eventversion)).toBe('2');
      const raw = sdkConsumer.raw.get(id)!;
      expect(raw.key?.toString()).toBe(orderId);
      expect(raw.headers?.['x-request-id']?.toString()).toBe(`req-${orderId}`);
      expect(Object.keys(raw.headers ?? {}).filter((name) => name.startsWith('outbox-'))).toEqual([]);
    }
    const binary = sdkConsumer.raw.get(binaryId)!;
    expect(JSON.parse(binary.value!.toString())).toEqual({ orderId: 'order-b1', total: 42.5, lines: [{ sku: 'A-1', qty: 2 }] });
    expect(binary.headers?.ce_id?.toString()).toBe(binaryId);
    const structured = sdkConsumer.raw.get(structuredId)!;
    expect(structured.headers?.['content-type']?.toString()).toMatch(/^application\/cloudevents\+json/);
    expect(JSON.parse(structured.value!.toString())).toMatchObject({ specversion: '1.0', id: structuredId, eventversion: 2 });
  });

  it('leaves a destination without a format in the outbox envelope', async () => {
    const seen: KafkaMessage[] = [];
    const kafka = new Kafka({ clientId: `ce-plain-${suffix}`, brokers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `ce-plain-${suffix}`, maxWaitTimeInMs: 100, sessionTimeout: 6_000, rebalanceTimeout: 6_000, heartbeatInterval: 1_000 });
    await consumer.connect();
    await consumer.subscribe({ topics: [outboxTopic], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message) });
    try {
      const [id] = await add(event(outboxTopic, 'order-o1'));
      const message = await waitFor('the outbox-format record', () => seen.find((m) => m.headers?.['outbox-message-id']?.toString() === id), 20_000);
      expect(JSON.parse(message.value!.toString())).toMatchObject({ id, type: 'shop.order-placed', version: 2, payload: { orderId: 'order-o1' } });
      expect(message.headers?.ce_id).toBeUndefined();
      expect(sdkConsumer.events.has(id)).toBe(false);
    } finally {
      await consumer.disconnect();
    }
  });

  it('the inbox applies a CloudEvent once, whichever the mode, deduplicating on its id (the outbox message id)', async () => {
    const [binaryId, structuredId] = await add([event(binaryTopic, 'order-b2'), event(structuredTopic, 'order-s2')]);
    await waitFor('both to be read', () => sdkConsumer.events.has(binaryId) && sdkConsumer.events.has(structuredId), 20_000);
    const inbox = consumerApp.get(OutboxInbox);
    for (const id of [binaryId, structuredId]) {
      const delivery = sdkConsumer.raw.get(id)!;
      const applied: string[] = [];
      const work = async (transaction: SqlTransaction) => {
        await transaction.query('SELECT 1', []);
        applied.push(id);
      };
      const first = await inbox.process(delivery, 'cloudevents.direct', work);
      const again = await inbox.process({ ...delivery }, 'cloudevents.direct', work);
      expect([first.duplicate, again.duplicate]).toEqual([false, true]);
      expect(applied).toEqual([id]);
      // The typed consumer reads the same delivery: type checked, version 2 from the eventversion extension.
      const typed = toOutboxEvent(OrderPlaced, delivery);
      expect(typed).toBeInstanceOf(OrderPlaced);
      expect(typed).toMatchObject({ orderId: id === binaryId ? 'order-b2' : 'order-s2', total: 42.5 });
    }
    const marks = await pool.query<{ message_id: string }>(`SELECT message_id FROM outbox_inbox WHERE consumer = 'cloudevents.direct' ORDER BY message_id`);
    expect(marks.rows.map((row) => row.message_id).sort()).toEqual([binaryId, structuredId].sort());
  });

  it('an @Idempotent() Nest Kafka handler reads a binary CloudEvent from its context and runs once per event, a redelivery skipped', async () => {
    const [id] = await add(event(binaryTopic, 'order-b3'));
    await waitFor('the Nest handler to run for the binary event', () => nestHandled.some((handled) => handled.id === id), 20_000);
    // Redeliver the very record (same headers and body) by hand: the inbox must skip it.
    const original = await waitFor('the SDK consumer to have the record', () => sdkConsumer.raw.get(id), 20_000);
    const [redelivered] = await producer.send({ topic: binaryTopic, messages: [{ key: original.key, value: original.value, headers: original.headers }] });
    const marker = randomUUID();
    await producer.send({ topic: binaryTopic, messages: [{ key: 'w', value: JSON.stringify({ id: marker, type: 'marker', version: 1, aggregateType: 't', aggregateId: 'w', occurredAt: new Date().toISOString(), headers: {}, payload: {} }) }] });
    await waitFor('the record after the redelivery to be handled', () => nestHandled.some((handled) => handled.id === marker), 20_000);
    expect(Number(redelivered.baseOffset)).toBeGreaterThan(0);
    expect(nestHandled.filter((handled) => handled.id === id)).toEqual([{ id, payload: { orderId: 'order-b3', total: 42.5, lines: [{ sku: 'A-1', qty: 2 }] } }]);
  });
});
