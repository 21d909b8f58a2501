import request from 'supertest';
import type { App } from 'supertest/types';
import { KafkaBrokerControl } from './support/kafka-broker.control';
import { KafkaTopicReader } from './support/kafka-topic.reader';
import { startOrderService, type RunningOrderService } from './support/order-service.harness';
import { waitFor } from './support/wait-for';

const order = { customerId: 'c-42', items: [{ sku: 'BOOK-1', quantity: 2, unitPriceCents: 1250 }] };

describe('order-service on PostgreSQL + Kafka', () => {
  let service: RunningOrderService;
  let reader: KafkaTopicReader;
  let http: App;

  beforeEach(async () => {
    service = await startOrderService('postgres', 'kafka');
    http = service.app.getHttpServer();
    if (service.config.broker.transport !== 'kafka') throw new Error('expected a Kafka broker config');
    reader = new KafkaTopicReader(service.config.broker.brokers, service.config.ordersTopic);
    await reader.start();
  });

  afterEach(async () => {
    await reader?.stop();
    await service?.close();
  });

  it('creates an order and delivers order-placed on Kafka, keyed by the order id, with the envelope headers', async () => {
    const created = await request(http).post('/orders').set('x-correlation-id', 'corr-e2e').set('x-tenant-id', 'acme').send(order).expect(201);
    const orderId: string = created.body.id;

    const [record] = await waitFor('order-placed on the topic', () => reader.forKey(orderId).length > 0 && reader.forKey(orderId), 30_000);
    expect(record.key).toBe(orderId);
    expect(record.headers).toMatchObject({
      'outbox-event-type': 'orders.order-placed',
      'outbox-event-version': '1',
      'outbox-aggregate-type': 'order',
      'outbox-aggregate-id': orderId,
      'outbox-correlation-id': 'corr-e2e',
      'outbox-tenant-id': 'acme',
    });
    expect(record.value).toMatchObject({
      id: record.headers['outbox-message-id'],
      type: 'orders.order-placed',
      aggregateId: orderId,
      correlationId: 'corr-e2e',
      payload: { orderId, customerId: 'c-42', totalCents: 2500 },
    });

    // The demo's own @EventPattern consumer saw the same message through Nest's Kafka transport.
    const consumed = await waitFor('the demo consumer to see the event', async () => {
      const response = await request(http).get('/received-events').query({ aggregateId: orderId });
      return response.body.length > 0 && response.body;
    }, 30_000);
    expect(consumed[0]).toMatchObject({ transport: 'kafka', key: orderId, envelope: { type: 'orders.order-placed' } });
    expect(await service.outboxRows()).toEqual([expect.objectContaining({ status: 'published', attempts: 1 })]);
  });

  it('publishes one order’s events in the order they happened', async () => {
    const { body } = await request(http).post('/orders').send(order).expect(201);
    await request(http).post(`/orders/${body.id}/pay`).expect(200);
    await request(http).post(`/orders/${body.id}/cancel`).send({ reason: 'changed my mind' }).expect(200);
    await request(http).post(`/orders/${body.id}/cancel`).expect(409);

    const records = await waitFor('three events of the order', () => reader.forKey(body.id).length >= 3 && reader.forKey(body.id), 30_000);
    expect(records.map((record) => record.headers['outbox-event-type'])).toEqual(['orders.order-placed', 'orders.order-paid', 'orders.order-cancelled']);
    expect(new Set(records.map((record) => record.partition)).size).toBe(1);
  });

  it('accepts orders while the broker is down and delivers them once it is back, without a restart', async () => {
    const broker = new KafkaBrokerControl();
    await broker.stop();
    let orderId: string;
    try {
      const created = await request(http).post('/orders').send(order).expect(201);
      orderId = created.body.id;
      await request(http).get(`/orders/${orderId}`).expect(200);
      const [failed] = await waitFor('a failed publish attempt to be recorded', async () => {
        const rows = await service.outboxRows();
        return rows[0]?.attempts >= 1 && rows[0].last_error !== null && rows;
      }, 30_000);
      expect(failed.status).toBe('pending');
      // The Kafka client's own error text is kept on the row.
      expect(failed.last_error).toMatch(/ECONNREFUSED|connect/i);
    } finally {
      await broker.start();
    }
    await waitFor('the order-placed event after the broker came back', () => reader.forKey(orderId).length > 0, 60_000);
    const [row] = await service.outboxRows();
    expect(row.status).toBe('published');
  });

  it('rejects a bad body with 400 naming the field, and writes nothing', async () => {
    const response = await request(http)
      .post('/orders')
      .send({ customerId: 'c-1', items: [{ sku: 'BOOK-1', quantity: -1, unitPriceCents: 100 }] })
      .expect(400);
    expect(response.body.message).toEqual(expect.arrayContaining([expect.stringContaining('items.0.quantity')]));
    await request(http).post('/orders').send({ customerId: 'c-1', items: [], sneaky: true }).expect(400);
    expect(await service.outboxRows()).toEqual([]);
    expect(await service.dataSource.query('SELECT count(*)::int AS n FROM orders')).toEqual([{ n: 0 }]);
  });
});
