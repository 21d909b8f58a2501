import request from 'supertest';
import type { Consumer } from 'kafkajs';
import { createOrderServiceApp, serveOrderService } from '../apps/order-service/src/bootstrap';
import { privateKafka } from './support/private-kafka';
import { startOrderService } from './support/order-service.harness';
import { waitFor } from './support/wait-for';

/**
 * `/health/consumer` goes down when the demo's Kafka consumer crashed during its startup: kafkajs'
 * run() then ends without an error, and the demo used to report it ready (200) once the startup ended.
 * A crash after the startup: test/order-service.poison.e2e-spec.ts and the unit spec beside
 * consumer-readiness.ts. The broker is the test's own (an outage of the shared one would disturb
 * other tests).
 */
describe('order-service consumer health when its Kafka consumer crashes (SQLite + Kafka)', () => {
  it('is down after a crash while the consumer joins its group, which ends its startup without an error', async () => {
    const kafka = await privateKafka();
    const prepared = await startOrderService('sqlite', 'kafka', {});
    await prepared.app.close();
    const config = { ...prepared.config, broker: { ...prepared.config.broker, brokers: [kafka.address] } } as typeof prepared.config;
    const app = await createOrderServiceApp(config, false);
    try {
      // The broker goes away while the consumer joins its group: kafkajs asks for the group's
      // coordinator (FindCoordinator, named GroupCoordinator in kafkajs), then sends JoinGroup,
      // which the broker holds (~3 s for a group's first join) until the outage closes it.
      const microservice = app.getMicroservices()[0];
      let watching = false;
      microservice.status.subscribe(() => {
        const [, consumer] = microservice.unwrap<[unknown, Consumer]>();
        if (watching) return;
        watching = true;
        consumer.on(consumer.events.REQUEST, ({ payload }) => {
          if (payload.apiName === 'GroupCoordinator') void kafka.stop();
        });
      });
      await serveOrderService(app, 0);
      const http = app.getHttpServer();
      const health = async () => (await request(http).get('/health/consumer')).body.consumer;

      const crashedWhileJoining = await waitFor('the consumer to report its crash while joining', async () => {
        const consumer = await health();
        return consumer.error?.startsWith('restarting after:') && consumer;
      }, 30_000);
      expect(crashedWhileJoining.state).toBe('joining');
      expect((await request(http).get('/health/consumer')).status).toBe(503);
    } finally {
      await kafka.start().catch(() => undefined);
      await app.close();
      await prepared.dropDatabase();
      await kafka.remove();
    }
  }, 150_000);
});
