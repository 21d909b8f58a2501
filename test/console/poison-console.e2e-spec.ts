import { randomUUID } from 'node:crypto';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { Registry } from 'prom-client';
import request from 'supertest';
import { DataSource } from 'typeorm';
import {
  CreateInboxPoisonTable,
  CreateInboxTable,
  CreateOutboxTable,
  Idempotent,
  OutboxInbox,
  OutboxInboxModule,
  OutboxModule,
  type OutboxEnvelope,
} from '@nest-outbox/outbox';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { BearerTokenGuard, OPERATOR_TOKEN } from '../support/console.harness';
import { launchChromium } from '../support/chromium';
import { isolatedDatabase } from '../support/outbox-harness';
import { waitFor } from '../support/wait-for';

let refusing = true;

@Injectable()
class Invoicer {
  constructor(private readonly inbox: OutboxInbox) {}

  @Idempotent('billing.invoice')
  async invoice(event: OutboxEnvelope): Promise<void> {
    if (refusing) throw new Error('tax service refused the invoice');
    await this.inbox.manager().query('INSERT INTO poison_invoices (message_id) VALUES ($1)', [event.id]);
  }
}

const envelope = (id: string): OutboxEnvelope => ({
  id, type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId: 'o-1', occurredAt: new Date().toISOString(), headers: {}, payload: { total: 12 },
});

/** The poison records in the console (REST and page, guarded) and in Prometheus metrics. */
describe('poison records in the console and metrics (PostgreSQL)', () => {
  let app: INestApplication;
  let drop: () => Promise<void>;
  const registry = new Registry();
  const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
  const failed = randomUUID();

  beforeAll(async () => {
    const isolated = await isolatedDatabase('postgres');
    drop = isolated.drop;
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...isolated.options, migrations: [CreateOutboxTable, CreateInboxTable, CreateInboxPoisonTable], migrationsRun: true, logging: false } as TypeOrmModuleOptions),
        OutboxModule.forRoot({ relay: false, defaultTopic: 'orders' }),
        OutboxInboxModule.forRoot({ pruneIntervalMs: 0, replayPollMs: 0, poison: { maxAttempts: 2 }, metrics: { registry, prefix: 'shop_' } }),
        OutboxConsoleModule.forRoot({ guard: BearerTokenGuard, path: 'ops/outbox' }),
      ],
      providers: [Invoicer],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.init();
    await app.get(DataSource).query('CREATE TABLE poison_invoices (message_id text PRIMARY KEY)');
    const invoicer = app.get(Invoicer);
    await expect(invoicer.invoice(envelope(failed))).rejects.toThrow('tax service refused');
    await invoicer.invoice(envelope(failed));
    await (invoicer.invoice as (value: unknown) => Promise<void>)({ hello: 'not an envelope' });
  });

  afterAll(async () => {
    await app?.close();
    await drop?.();
  });

  it('lists, reads, refuses bad input, replays and deletes over REST, behind the guard', async () => {
    const http = app.getHttpServer();
    await request(http).get('/ops/outbox/api/poison').expect(401);
    const { body } = await request(http).get('/ops/outbox/api/poison').set(auth).expect(200);
    expect(body.enabled).toBe(true);
    expect(body.replayable).toEqual(['billing.invoice']);
    expect(body.records.map((r: { messageId: string | null; state: string; attempts: number }) => [r.messageId, r.state, r.attempts])).toEqual(
      expect.arrayContaining([[failed, 'set-aside', 2], [null, 'set-aside', 1]]),
    );
    const undecodable = body.records.find((r: { messageId: string | null }) => r.messageId === null);
    await request(http).get('/ops/outbox/api/poison?consumer=a%00b').set(auth).expect(400);
    await request(http).get('/ops/outbox/api/poison?state=dead').set(auth).expect(400);
    await request(http).get(`/ops/outbox/api/poison/billing.invoice/${randomUUID()}`).set(auth).expect(404);
    const detail = await request(http).get(`/ops/outbox/api/poison/billing.invoice/${encodeURIComponent(undecodable.key)}`).set(auth).expect(200);
    expect(detail.body.raw).toBe('{"hello":"not an envelope"}');
    const json = { ...auth, 'content-type': 'application/json' };
    const refused = await request(http).post(`/ops/outbox/api/poison/billing.invoice/${encodeURIComponent(undecodable.key)}/replay`).set(json).send({}).expect(409);
    expect(refused.body.message).toMatch(/cannot be replayed: it could not be decoded/);
    // Still refusing: the replay fails with the handler's error and counts one more attempt.
    const stillFailing = await request(http).post(`/ops/outbox/api/poison/billing.invoice/${failed}/replay`).set(json).send({}).expect(409);
    expect(stillFailing.body.message).toMatch(/failed: tax service refused the invoice/);
    await request(http).post(`/ops/outbox/api/poison/billing.invoice/${encodeURIComponent(undecodable.key)}/delete`).set(json).send({}).expect(200);
    await request(http).post(`/ops/outbox/api/poison/billing.invoice/${encodeURIComponent(undecodable.key)}/delete`).set(json).send({}).expect(404);
    const metrics = await registry.metrics();
    expect(metrics).toContain(`shop_inbox_poison_messages{consumer="billing.invoice",state="set-aside"} 1`);
    expect(metrics).toContain(`shop_inbox_poison_messages{consumer="billing.invoice",state="failing"} 0`);
  });

  it('shows the records on the page and replays one with a click', async () => {
    await app.listen(0, '127.0.0.1');
    const browser = await launchChromium();
    try {
      await browser.context.setExtraHTTPHeaders(auth);
      const page = await browser.context.newPage();
      await page.goto(`${await app.getUrl()}/ops/outbox`);
      const row = page.locator(`#poison-records tbody tr[data-key="${failed}"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.locator('td').nth(6).textContent()).toBe('handler failed: tax service refused the invoice');
      // A long reason and raw JSON wrap inside their cells: the page stays as wide as the window.
      expect(await page.evaluate('({ page: document.documentElement.scrollWidth, window: window.innerWidth })')).toEqual({ page: 1400, window: 1400 });
      refusing = false;
      await row.locator('button.poison-replay').click();
      await page.locator('#poison-status').filter({ hasText: `Replayed billing.invoice / ${failed}.` }).waitFor({ timeout: 10_000 });
      await row.waitFor({ state: 'detached', timeout: 10_000 });
      const invoices = await app.get(DataSource).query('SELECT message_id FROM poison_invoices');
      expect(invoices).toEqual([{ message_id: failed }]);
      await waitFor('the gauge to show no set-aside record', async () => (await registry.metrics()).includes(`shop_inbox_poison_messages{consumer="billing.invoice",state="set-aside"} 0`));
      expect(await app.get(OutboxInbox).poison!.list({ limit: 10 })).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
