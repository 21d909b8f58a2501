import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import request from 'supertest';
import { OutboxInbox } from '@nest-outbox/outbox';
import { startOrderService, type RunningOrderService } from './support/order-service.harness';
import { serviceOutage } from './transports/transport-contract';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';

const item = { sku: 'PEN', quantity: 1, unitPriceCents: 99 };

describe('order-service refuses hostile input with 4xx and writes nothing (PostgreSQL + TCP)', () => {
  let service: RunningOrderService;

  beforeAll(async () => {
    service = await startOrderService('postgres', 'tcp');
  });

  afterAll(async () => {
    await service?.close();
  });

  // Sent as text: client-side serializers recurse and would overflow before the server sees it.
  const json = (body: unknown) => JSON.stringify(body);
  const deepBody = (levels: number) => `{"customerId":"c-1","items":${'['.repeat(levels)}${']'.repeat(levels)}}`;

  it.each([
    ['a NUL character in customerId', {}, json({ customerId: 'c\u0000-1', items: [item] }), 400, /customerId must not contain control characters/],
    ['an order total past the 32-bit range', {}, json({ customerId: 'c-1', items: [{ sku: 'GOLD', quantity: 10_000, unitPriceCents: 100_000_000 }] }), 422, /over the limit of 2147483647 cents/],
    ['a body nested 20,000 levels deep', {}, deepBody(20_000), 400, /nested deeper than 16 levels/],
    ['an X-Correlation-Id of 300 characters', { 'x-correlation-id': 'c'.repeat(300) }, json({ customerId: 'c-1', items: [item] }), 400, /x-correlation-id must be 1–128/],
    ['an X-Tenant-Id with spaces and quotes', { 'x-tenant-id': `t" OR 1=1 --` }, json({ customerId: 'c-1', items: [item] }), 400, /x-tenant-id must be 1–128/],
  ])('%s is refused with a 4xx', async (_, headers, body, status, message) => {
    const before = (await service.outboxRows()).length;
    const response = await request(service.app.getHttpServer()).post('/orders').set(headers).set('content-type', 'application/json').send(body);
    expect(response.status).toBe(status);
    expect(JSON.stringify(response.body)).toMatch(message);
    expect(await service.outboxRows()).toHaveLength(before);
    const [{ n }] = await service.dataSource.query('SELECT COUNT(*) AS n FROM orders');
    expect(Number(n)).toBe(0);
  });
});

describe('order-service while its database server is stopped (PostgreSQL + TCP)', () => {
  it('answers 503 with Retry-After and writes nothing, then 201 once the server is back', async () => {
    // The real outage: scripts/services.sh stops the PostgreSQL server (data and port kept) and resumes it.
    const postgres = serviceOutage('postgres')({} as never);
    const service = await startOrderService('postgres', 'tcp');
    let stopped = false;
    try {
      const http = service.app.getHttpServer();
      const order = { customerId: 'c-outage', items: [item] };
      await request(http).post('/orders').send(order).expect(201);

      await postgres.stop();
      stopped = true;
      const refused = await request(http).post('/orders').send(order);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.body.message).toMatch(/database is unavailable; nothing was saved/);

      await postgres.start();
      stopped = false;
      await waitFor('the API to take orders again', async () => (await request(http).post('/orders').send(order)).status === 201, 60_000);
      const rows = await service.outboxRows();
      expect(rows.map((row) => row.event_type)).toEqual(['orders.order-placed', 'orders.order-placed']);
    } finally {
      if (stopped) await postgres.start();
      await service.close();
    }
  });
});

describe('order-service consumer while its database server is stopped (PostgreSQL + Kafka)', () => {
  it('fails its deliveries without counting them as poison, and handles the message once the server is back', async () => {
    const postgres = serviceOutage('postgres')({} as never);
    const service = await startOrderService('postgres', 'kafka');
    const producer = new Kafka({ clientId: `outage-producer-${randomUUID()}`, brokers: requireService('kafka').split(','), logLevel: logLevel.NOTHING }).producer();
    let stopped = false;
    try {
      const http = service.app.getHttpServer();
      const { body: order } = await request(http).post('/orders').send({ customerId: 'c-consumer-outage', items: [item] }).expect(201);
      await waitFor('the first order on the timeline', async () => (await request(http).get('/received-events/timeline').query({ orderId: order.id })).body.length === 1, 60_000);
      await producer.connect();

      await postgres.stop();
      stopped = true;
      const aggregateId = randomUUID();
      const envelope = { id: randomUUID(), type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId, occurredAt: new Date().toISOString(), headers: {}, payload: {} };
      await producer.send({ topic: service.config.ordersTopic, messages: [{ key: aggregateId, value: JSON.stringify(envelope) }] });
      // More failed deliveries than the poison policy's maxAttempts (5): none can be counted while the database is away.
      await waitFor(
        'the message delivered 6 times during the outage',
        async () => ((await request(http).get('/received-events').query({ aggregateId })).body[0]?.deliveries ?? 0) >= 6,
        60_000,
      );

      await postgres.start();
      stopped = false;
      await waitFor('the message on the timeline', async () => (await request(http).get('/received-events/timeline').query({ orderId: aggregateId })).body.length === 1, 60_000);
      expect(await service.app.get(OutboxInbox).poison!.list({ limit: 10 })).toEqual([]);
    } finally {
      if (stopped) await postgres.start();
      await producer.disconnect();
      await service.close();
    }
  }, 180_000);
});
