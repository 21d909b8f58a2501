import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createOrderServiceApp, serveOrderService } from '../apps/order-service/src/bootstrap';
import { loadOrderServiceConfig } from '../apps/order-service/src/config/order-service.config';
import { freePort, freeRestartablePort } from './support/free-port';
import { waitFor } from './support/wait-for';

/**
 * The demo started as main.ts starts it (SQLite + TCP, its defaults): events left pending by a
 * stopped instance (attempts 0) go out at the next start on their first attempt, because the relay waits for
 * the app's own TCP listener instead of being refused by it (ECONNREFUSED) and charging an attempt.
 */
describe('order-service restarted on its embedded default (SQLite + TCP)', () => {
  let dir: string;
  let app: INestApplication | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'order-service-restart-'));
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the rows pending across a restart on their first attempt, none refused', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'orders.sqlite')}`, TCP_PORT: String(await freeRestartablePort()), ORDERS_TOPIC: 'orders', OUTBOX_POLL_INTERVAL_MS: '200' };
    const start = async (extra: Record<string, string>) => {
      const config = loadOrderServiceConfig({ ...env, PORT: String(await freePort()), ...extra });
      const started = await createOrderServiceApp(config, false);
      await serveOrderService(started, config.httpPort);
      return started;
    };

    // An instance that writes and does not relay: its events stay pending when it stops.
    app = await start({ OUTBOX_RELAY: 'false' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { body } = await request(app.getHttpServer()).post('/orders').send({ customerId: `c-${i}`, items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 99 }] }).expect(201);
      ids.push(body.id);
    }
    const pending = await app.get(DataSource).query('SELECT status, attempts FROM outbox_messages ORDER BY position');
    expect(pending).toEqual(ids.map(() => ({ status: 'pending', attempts: 0 })));
    await app.close();
    app = undefined;

    app = await start({});
    const http = app.getHttpServer();
    for (const id of ids) {
      await waitFor(`the order-placed event of ${id} at the consumer`, async () => (await request(http).get('/received-events').query({ aggregateId: id })).body.length === 1);
    }
    // A claim counts the attempt: 1 is the attempt that delivered, with no refused one before it.
    const rows = await app.get(DataSource).query('SELECT status, attempts, last_error FROM outbox_messages ORDER BY position');
    expect(rows).toEqual(ids.map(() => ({ status: 'published', attempts: 1, last_error: null })));
  });
});
