import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
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

  it('shows counts, filters, opens a dead message, and requeues it by clicking', async () => {
    const http = service.app.getHttpServer();
    const topic = service.config.ordersTopic;
    const json = { 'Content-Type': 'application/json' };
    // Hold the topic so that one order's event can be made dead before any is published.
    await request(http).post('/outbox/api/destinations/pause').set(json).send({ destination: topic }).expect(200);
    const orders: string[] = [];
    for (const customerId of ['c-1', 'c-2', 'c-3']) {
      const { body } = await request(http).post('/orders').send({ customerId, items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 250 }] }).expect(201);
      orders.push(body.id);
    }
    await service.dataSource.query(
      `UPDATE outbox_messages SET status = 'dead', attempts = 5, dead_at = now(), last_error = 'connect ECONNREFUSED 10.0.0.7:4100',
         error_history = '[{"at":"2026-01-01T10:00:00.000Z","error":"connect ECONNREFUSED 10.0.0.7:4100"},{"at":"2026-01-01T10:00:02.000Z","error":"connect ECONNREFUSED 10.0.0.7:4100"}]'
       WHERE aggregate_id = $1`,
      [orders[0]],
    );
    const [{ id: deadId }] = await service.dataSource.query(`SELECT id FROM outbox_messages WHERE aggregate_id = $1`, [orders[0]]);
    await request(http).post('/outbox/api/destinations/resume').set(json).send({ destination: topic }).expect(200);
    await waitFor('the two other orders published', async () => (await service.outboxRows()).filter((row) => row.status === 'published').length === 2);

    const page = await browser.context.newPage();
    await page.goto(`${await service.app.getUrl()}/outbox`);
    await waitFor('the counts', async () => (await count(page, 'dead')) === '1' && (await count(page, 'publishedLastHour')) === '2');
    expect(await count(page, 'pending')).toBe('0');
    expect(await page.locator('#messages').getAttribute('data-rows')).toBe('3');
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
      'the requeued event at the demo consumer',
      async () => {
        const { body } = await request(http).get('/received-events').query({ aggregateId: orders[0] });
        return body.find((event: { envelope: { id: string } }) => event.envelope.id === deadId);
      },
      20_000,
    );
    expect(received.envelope.type).toBe('orders.order-placed');
    expect((await service.outboxRows()).map((row) => row.status)).toEqual(['published', 'published', 'published']);
    await page.click('#refresh');
    await waitFor('no dead row left on the page', async () => (await count(page, 'dead')) === '0');
    await page.close();
    rmSync(shots, { recursive: true, force: true });
  });
});
