import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Page } from 'playwright-core';
import { OutboxRelayHost } from '@nest-outbox/outbox';
import { launchChromium } from '../support/chromium';
import { createConsoleHarness } from '../support/console.harness';
import { startOrderService, type RunningOrderService } from '../support/order-service.harness';
import { waitFor } from '../support/wait-for';

/**
 * The console page in a real headless Chromium, served by the demo on PostgreSQL: the operator sees
 * the counts, filters, opens a dead message and requeues it by clicking; the demo's consumer then
 * receives it. `OUTBOX_UPDATE_SCREENSHOT=1` also refreshes docs/console.png for the README.
 */
describe('Outbox console page in Chromium (demo on PostgreSQL)', () => {
  let service: RunningOrderService;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    service = await startOrderService('postgres', 'tcp', { console: 'demo-no-auth' });
    await service.app.listen(0, '127.0.0.1');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  const count = (page: Page, key: string) => page.locator(`[data-count="${key}"]`).textContent();
  const shots = mkdtempSync(join(tmpdir(), 'outbox-console-shots-'));
  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(shots, name), fullPage: true });
    if (process.env.OUTBOX_UPDATE_SCREENSHOT === '1') copyFileSync(join(shots, name), join(__dirname, '..', '..', 'docs', name));
  }

  /**
   * Places one order per customer while the topic is paused, makes the events of the first `dead`
   * orders dead (as a partner outage would have), and resumes: the others are published.
   */
  async function placeOrders(customers: string[], dead: number): Promise<{ orders: string[]; deadIds: string[] }> {
    const http = service.app.getHttpServer();
    const topic = service.config.ordersTopic;
    const json = { 'Content-Type': 'application/json' };
    await request(http).post('/outbox/api/destinations/pause').set(json).send({ destination: topic, confirmUnknown: true }).expect(200);
    const orders: string[] = [];
    for (const customerId of customers) {
      const { body } = await request(http).post('/orders').send({ customerId, items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 250 }] }).expect(201);
      orders.push(body.id);
    }
    await service.dataSource.query(
      `UPDATE outbox_messages SET status = 'dead', attempts = 5, dead_at = now(), last_error = 'connect ECONNREFUSED 10.0.0.7:4100',
         error_history = '[{"at":"2026-01-01T10:00:00.000Z","error":"connect ECONNREFUSED 10.0.0.7:4100"},{"at":"2026-01-01T10:00:02.000Z","error":"connect ECONNREFUSED 10.0.0.7:4100"}]'
       WHERE aggregate_id = ANY($1)`,
      [orders.slice(0, dead)],
    );
    const deadIds = (await service.dataSource.query(`SELECT id FROM outbox_messages WHERE aggregate_id = ANY($1) ORDER BY position`, [orders.slice(0, dead)])).map(
      (row: { id: string }) => row.id,
    );
    await request(http).post('/outbox/api/destinations/resume').set(json).send({ destination: topic }).expect(200);
    await waitFor('the other orders published', async () => {
      const rows = await service.outboxRows();
      return rows.filter((row) => row.status === 'pending').length === 0;
    });
    return { orders, deadIds };
  }

  async function receivedIds(): Promise<string[]> {
    const { body } = await request(service.app.getHttpServer()).get('/received-events');
    return body.map((event: { envelope: { id: string } }) => event.envelope.id);
  }

  it('shows counts, filters, opens a dead message, and requeues it by clicking', async () => {
    const http = service.app.getHttpServer();
    const { orders, deadIds: [deadId] } = await placeOrders(['c-1', 'c-2', 'c-3'], 1);

    const page = await browser.context.newPage();
    await page.goto(`${await service.app.getUrl()}/outbox`);
    await waitFor('the counts', async () => (await count(page, 'dead')) === '1' && (await count(page, 'publishedLastHour')) === '2');
    expect(await count(page, 'pending')).toBe('0');
    // The counts and the rows arrive by separate requests: wait for the rows too.
    await waitFor('the three rows', async () => (await page.locator('#messages').getAttribute('data-rows')) === '3');
    expect(Number(await page.locator('#throughput').getAttribute('data-total'))).toBe(2);
    await screenshot(page, 'console.png');

    await page.selectOption('#filters select[name=status]', 'dead');
    await page.click('#filters button[type=submit]');
    await waitFor('one dead row', async () => (await page.locator('#messages').getAttribute('data-rows')) === '1');
    await page.locator('#messages tbody tr', { hasText: 'ECONNREFUSED' }).click();
    await page.locator('#detail').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-errors li').count()).toBe(2);
    expect(await page.locator('#detail-fields').textContent()).toContain(deadId);
    await screenshot(page, 'console-detail.png');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#detail-requeue');
    const received = await waitFor(
      'the requeued event at the demo consumer (seen by the consumer)',
      async () => {
        const { body } = await request(http).get('/received-events').query({ aggregateId: orders[0] });
        return body.find((event: { envelope: { id: string } }) => event.envelope.id === deadId);
      },
      20_000,
    );
    expect(received.envelope.type).toBe('orders.order-placed');
    // The consumer can have the message before the relay has recorded the broker's acknowledgement.
    await waitFor('every row published', async () => (await service.outboxRows()).every((row) => row.status === 'published'));
    await page.click('#refresh');
    await waitFor('no dead row left on the page', async () => (await count(page, 'dead')) === '0');
    await page.close();
  });

  it('pauses and resumes a destination from the page, which every relay honours', async () => {
    const topic = service.config.ordersTopic;
    const page = await browser.context.newPage();
    await page.goto(`${await service.app.getUrl()}/outbox`);
    await page.fill('#pause-form input[name=destination]', topic);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#pause-form button[type=submit]');
    await waitFor('the paused destination listed', async () => (await page.locator('#paused').textContent())?.includes(topic));
    const paused = await service.dataSource.query('SELECT destination FROM outbox_messages_paused');
    expect(paused).toEqual([{ destination: topic }]);
    const { body: order } = await request(service.app.getHttpServer())
      .post('/orders')
      .send({ customerId: 'p-1', items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 250 }] })
      .expect(201);
    // A full relay pass while paused leaves it pending.
    await service.app.get(OutboxRelayHost).drain();
    expect((await service.dataSource.query('SELECT status FROM outbox_messages WHERE aggregate_id = $1', [order.id])).map((row: { status: string }) => row.status)).toEqual([
      'pending',
    ]);
    await page.locator('#paused li', { hasText: topic }).locator('button').click();
    await waitFor('the held event at the demo consumer after resuming', async () => {
      const { body } = await request(service.app.getHttpServer()).get('/received-events').query({ aggregateId: order.id });
      return body.length === 1;
    }, 20_000);
    await waitFor('no paused destination listed', async () => (await page.locator('#paused').textContent()) === 'none');
    await page.close();
  });

  it('requeues every dead message matching the filter after confirming the counted number', async () => {
    const { deadIds } = await placeOrders(['b-1', 'b-2', 'b-3'], 2);
    const page = await browser.context.newPage();
    await page.goto(`${await service.app.getUrl()}/outbox`);
    await waitFor('two dead', async () => (await count(page, 'dead')) === '2');
    await page.fill('#filters input[name=type]', 'orders.order-placed');
    await page.click('#filters button[type=submit]');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.click('#bulk-requeue');
    await waitFor('both requeued events at the demo consumer', async () => {
      const received = await receivedIds();
      return deadIds.every((id) => received.includes(id));
    }, 20_000);
    expect(asked).toBe('Requeue 2 dead message(s) matching the filter?');
    await waitFor('the page shows no dead row', async () => (await count(page, 'dead')) === '0');
    await page.close();
    rmSync(shots, { recursive: true, force: true });
  });
});

describe('Outbox console page in Chromium, read-only (SQLite)', () => {
  it('shows the figures and messages but no action', async () => {
    const h = await createConsoleHarness('sqlite', { noAuth: true, readOnly: true });
    const browser = await launchChromium();
    try {
      await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-1', payload: {} }]);
      await h.app.listen(0, '127.0.0.1');
      const page = await browser.context.newPage();
      await page.goto(`${await h.app.getUrl()}/outbox/`);
      await waitFor('the page loaded', async () => (await page.locator('[data-count="pending"]').textContent()) === '1');
      expect(await page.locator('#read-only').isVisible()).toBe(true);
      for (const action of ['#bulk', '#pause-form', '#detail-requeue', '#detail-discard']) expect(await page.locator(action).isVisible()).toBe(false);
      await page.locator('#messages tbody tr').first().click();
      await page.locator('#detail').waitFor({ state: 'visible' });
      expect(await page.locator('#detail-requeue').isVisible()).toBe(false);
    } finally {
      await browser.close();
      await h.close();
    }
  });
});
