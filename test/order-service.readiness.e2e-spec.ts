import request from 'supertest';
import { createOrderServiceApp, serveOrderService } from '../apps/order-service/src/bootstrap';
import { KafkaBrokerControl } from './support/kafka-broker.control';
import { startOrderService } from './support/order-service.harness';
import { waitFor } from './support/wait-for';

/**
 * The demo as `npm run demo` starts it (HTTP first, consumer in the background) while Kafka is down:
 * it takes orders at once, says its consumer is not ready yet, and delivers once Kafka is back.
 */
describe('order-service readiness without its broker (PostgreSQL + Kafka)', () => {
  it('serves orders while Kafka is down, reports the consumer joining, then delivers when Kafka is back', async () => {
    const kafka = new KafkaBrokerControl();
    // The harness prepares a private schema and topic; its own app is closed at once, a second one is served like main.ts does.
    const prepared = await startOrderService('postgres', 'kafka');
    await prepared.app.close();
    await kafka.stop();
    const app = await createOrderServiceApp(prepared.config, false);
    try {
      const started = Date.now();
      await serveOrderService(app, 0);
      const http = app.getHttpServer();
      const { body: order } = await request(http).post('/orders').send({ customerId: 'c-offline', items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 99 }] }).expect(201);
      const servingAfterMs = Date.now() - started;
      const joining = await request(http).get('/health/consumer').expect(503);
      expect(joining.body.consumer.state).toBe('joining');

      await kafka.start();
      await waitFor('the consumer to join', async () => (await request(http).get('/health/consumer')).status === 200, 60_000);
      const received = await waitFor(
        'the order placed while Kafka was down at the consumer',
        async () => {
          const { body } = await request(http).get('/received-events').query({ aggregateId: order.id });
          return body.length === 1 && body;
        },
        60_000,
      );
      expect(received[0].envelope.type).toBe('orders.order-placed');
      // Serving did not wait for the broker: far below kafkajs' first connection timeout and retries.
      expect(servingAfterMs).toBeLessThan(10_000);
    } finally {
      await kafka.start().catch(() => undefined);
      await app.close();
      await prepared.dropDatabase();
    }
  }, 120_000);
});
