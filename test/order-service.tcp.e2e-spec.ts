import { ClientTCP } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { startOrderService, type RunningOrderService } from './support/order-service.harness';
import { waitFor } from './support/wait-for';

describe.each([
  ['its embedded default (SQLite + TCP)', 'sqlite'],
  ['MariaDB + TCP', 'mariadb'],
] as const)('order-service on %s', (_, database) => {
  let service: RunningOrderService;

  beforeEach(async () => {
    service = await startOrderService(database, 'tcp');
  });

  afterEach(async () => {
    await service?.close();
  });

  it('creates, pays and reads an order, and the consumer receives both events in order', async () => {
    const http = service.app.getHttpServer();
    const { body: created } = await request(http).post('/orders').set('x-correlation-id', 'c-sqlite').send({ customerId: 'c-7', items: [{ sku: 'PEN', quantity: 3, unitPriceCents: 99 }] }).expect(201);
    expect(created).toMatchObject({ status: 'placed', totalCents: 297 });
    await request(http).post(`/orders/${created.id}/pay`).expect(200);
    await request(http).get(`/orders/${created.id}`).expect(200).expect(({ body }) => expect(body.status).toBe('paid'));
    await request(http).get('/orders/8a0b0d1e-0000-4000-8000-000000000000').expect(404);

    const received = await waitFor('two events at the consumer', async () => {
      const { body } = await request(http).get('/received-events').query({ aggregateId: created.id });
      return body.length === 2 && body;
    });
    expect(received.map((event: { envelope: { type: string } }) => event.envelope.type)).toEqual(['orders.order-placed', 'orders.order-paid']);
    expect(received[0]).toMatchObject({ transport: 'tcp', envelope: { correlationId: 'c-sqlite', payload: { totalCents: 297 } } });
    expect((await service.outboxRows()).map((row) => row.status)).toEqual(['published', 'published']);

    // The consumer's side effect went through the inbox: one timeline entry per message...
    const timeline = await waitFor('two timeline entries', async () => {
      const { body } = await request(http).get('/received-events/timeline').query({ orderId: created.id });
      return body.length === 2 && body;
    });
    expect(timeline.map((entry: { eventType: string }) => entry.eventType)).toEqual(['orders.order-placed', 'orders.order-paid']);

    // ...and a redelivery of the same message is counted but not applied again.
    const { host, port } = service.config.broker as { host: string; port: number };
    const client = new ClientTCP({ host, port });
    try {
      await lastValueFrom(client.emit(service.config.ordersTopic, received[0].envelope), { defaultValue: undefined });
      await waitFor('the redelivery at the consumer', async () => {
        const { body } = await request(http).get('/received-events').query({ aggregateId: created.id });
        return body[0]?.deliveries === 2;
      });
    } finally {
      client.close();
    }
    await waitFor('the inbox to have skipped the redelivery', async () => {
      const [mark] = await service.dataSource.query(`SELECT COUNT(*) AS n FROM outbox_inbox WHERE message_id = '${received[0].envelope.id}'`);
      return Number(mark.n) === 1;
    });
    const { body: after } = await request(http).get('/received-events/timeline').query({ orderId: created.id });
    expect(after).toHaveLength(2);
  });
});
