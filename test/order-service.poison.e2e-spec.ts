import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication, INestMicroservice } from '@nestjs/common';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { OutboxInbox } from '@nest-outbox/outbox';
import { createOrderServiceApp, serveOrderService } from '../apps/order-service/src/bootstrap';
import type { DatabaseConfig, OrderServiceConfig } from '../apps/order-service/src/config/order-service.config';
import { privatePostgresSchema } from './support/databases';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';

const envelope = (id: string, aggregateId: string) => ({
  id, type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId, occurredAt: new Date().toISOString(), headers: {}, payload: {},
});

/**
 * The demo's consumer on the shared Kafka broker (nothing is stopped but this app's own consumer):
 * handler errors, and messages that are not envelopes, do not stop it; a stopped consumer is down.
 */
describe.each(['postgres', 'sqlite'] as const)('order service consumer and poison messages (%s)', (databaseKind) => {
  const suffix = randomBytes(5).toString('hex');
  let app: INestApplication | undefined;
  let schema: { drop(): Promise<void> } | undefined;
  let producer: Producer | undefined;
  let topic: string;
  let url: string;

  beforeAll(async () => {
    let database: DatabaseConfig;
    if (databaseKind === 'postgres') {
      const { url, schema: name, drop } = await privatePostgresSchema('poison');
      database = { type: 'postgres', url, schema: name };
      schema = { drop };
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'order-service-poison-'));
      database = { type: 'better-sqlite3', database: join(dir, 'orders.sqlite') };
      schema = { drop: async () => rmSync(dir, { recursive: true, force: true }) };
    }
    const brokers = requireService('kafka').split(',');
    const config: OrderServiceConfig = {
      httpPort: 0,
      database,
      broker: { transport: 'kafka', brokers, clientId: `order-service-${suffix}`, groupId: `order-consumer-${suffix}` },
      ordersTopic: `orders-${suffix}`,
      outbox: { relay: true, pollIntervalMs: 200, backoffInitialMs: 200, backoffMaxMs: 2_000 },
    } as OrderServiceConfig;
    topic = config.ordersTopic;
    producer = new Kafka({ clientId: `poison-producer-${suffix}`, brokers, logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    // The topic exists before the consumer joins, so it reads everything sent below.
    await producer.send({ topic, messages: [{ partition: 0, value: JSON.stringify(envelope(randomUUID(), randomUUID())) }] });
    app = await createOrderServiceApp(config, false);
    await serveOrderService(app, 0);
    url = await app.getUrl();
    await waitFor('the consumer to be ready', async () => (await fetch(`${url}/health/consumer`)).status === 200, 30_000);
  }, 60_000);

  afterAll(async () => {
    await producer?.disconnect();
    await app?.close();
    await schema?.drop();
  });

  const timeline = async (): Promise<string[]> => (await app!.get(DataSource).query('SELECT "messageId" FROM order_timeline')).map((row: { messageId: string }) => row.messageId);

  it('keeps consuming after a message that is not an envelope and after a handler that fails with a database error', async () => {
    const valid = [randomUUID(), randomUUID()];
    const failing = randomUUID();
    await producer!.send({
      topic,
      messages: [
        { partition: 0, value: 'not an envelope' },
        { partition: 0, value: JSON.stringify(envelope(valid[0], randomUUID())) },
        // An envelope without occurredAt (optional in an envelope): the timeline's NOT NULL column refuses it on every delivery.
        { partition: 0, value: JSON.stringify({ ...envelope(failing, randomUUID()), occurredAt: undefined }) },
        { partition: 0, value: JSON.stringify(envelope(valid[1], randomUUID())) },
      ],
    });
    await waitFor('both valid messages on the timeline', async () => {
      const ids = await timeline();
      return valid.every((id) => ids.includes(id));
    }, 20_000);
    const records = await app!.get(OutboxInbox).poison!.list({ consumer: 'order-service.timeline', limit: 10 });
    expect(records.map((record) => [record.messageId, record.state, record.attempts])).toEqual(
      expect.arrayContaining([
        [null, 'set-aside', 1],
        [failing, 'set-aside', 5],
      ]),
    );
    expect(records.find((record) => record.messageId === failing)!.reason).toMatch(/^handler failed: .*(not-null|NOT NULL)/);
    expect((await fetch(`${url}/health/consumer`)).status).toBe(200);
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('outbox_inbox_poison_messages{consumer="order-service.timeline",state="set-aside"} 2');
  });

  it('reports a stopped consumer as down on /health/consumer', async () => {
    const [microservice] = (app as unknown as { getMicroservices(): INestMicroservice[] }).getMicroservices();
    const [, consumer] = microservice.unwrap<[unknown, Consumer]>();
    await consumer.stop();
    const response = await waitFor('/health/consumer to answer 503', async () => {
      const answer = await fetch(`${url}/health/consumer`);
      return answer.status === 503 ? answer : undefined;
    });
    expect(await response.json()).toMatchObject({ consumer: { state: 'failed', error: expect.stringMatching(/stopped/) } });
  });
});
