import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Test, type TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { OutboxModule, type OutboxEnvelope } from '@nest-outbox/outbox';
import { Parcel } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';
import { WebhookTransport } from './webhook.transport';
import { parcelsOnSqlite } from '../support/sqlite-parcels';

describe('a custom transport (the README’s webhook example) on a real HTTP server', () => {
  let server: Server;
  let module: TestingModule;
  let dir: string;
  let failNext = 0;
  const received: Array<{ path: string; headers: IncomingMessage['headers']; envelope: OutboxEnvelope }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        if (failNext > 0) {
          failNext -= 1;
          response.writeHead(503).end('try later');
          return;
        }
        received.push({ path: request.url ?? '', headers: request.headers, envelope: JSON.parse(body) });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    dir = mkdtempSync(join(tmpdir(), 'outbox-webhook-'));
    module = await Test.createTestingModule({
      imports: [
        parcelsOnSqlite(dir),
        OutboxModule.forRoot({
          transport: new WebhookTransport(`http://127.0.0.1:${port}/events`),
          pollIntervalMs: 100,
          backoff: { initialMs: 100, maxMs: 200, jitter: 0 },
        }),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers the envelope with its headers, and retries what the endpoint refused', async () => {
    failNext = 1;
    const parcel = Parcel.register('webhook', 7);
    await module.get(DataSource).getRepository(Parcel).save(parcel);
    const [delivery] = await waitFor('the webhook call', () => received.length > 0 && received);
    expect(delivery.path).toBe('/events/parcels');
    expect(delivery.headers['outbox-event-type']).toBe('parcels.parcel-registered');
    expect(delivery.envelope).toMatchObject({ aggregateId: parcel.id, payload: { weightGrams: 7 } });
    // The relay settles the row right after the endpoint answered.
    const row = await waitFor('the row to be settled', async () => {
      const [current] = await module.get(DataSource).query(`SELECT status, attempts, last_error FROM outbox_messages`);
      return current.status === 'published' && current;
    });
    expect(row).toMatchObject({ attempts: 2, last_error: 'webhook answered 503: try later' });
  });
});
