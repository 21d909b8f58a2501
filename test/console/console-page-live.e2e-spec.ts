import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Dialog, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { waitFor } from '../support/wait-for';

/**
 * The console page in a real headless Chromium (SQLite, refreshing every second): it refreshes by
 * itself, recovers when the app is back, shows an action's error where the action was taken, and
 * offers "retry now" and a confirmed pause of an unknown destination.
 */
describe('Outbox console page in Chromium: live refresh, recovery, errors in place (SQLite)', () => {
  let h: ConsoleHarness;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let url: string;
  const dialogs: string[] = [];
  // Each dialog is answered from this queue (true = accept); an unexpected dialog is dismissed.
  let answers: boolean[] = [];

  beforeEach(async () => {
    h = await createConsoleHarness('sqlite', { noAuth: true, refreshIntervalMs: 1_000 });
    await h.app.listen(0, '127.0.0.1');
    url = `${await h.app.getUrl()}/outbox/`;
    browser = await launchChromium();
    page = await browser.context.newPage();
    dialogs.length = 0;
    answers = [];
    page.on('dialog', (dialog: Dialog) => {
      dialogs.push(dialog.message());
      void (answers.shift() ? dialog.accept() : dialog.dismiss());
    });
  });
  afterEach(async () => {
    await browser?.close();
    await h?.close();
  });

  const rows = () => page.locator('#messages').getAttribute('data-rows');
  const message = (aggregateId: string, topic?: string) => ({ type: 'orders.order-placed', aggregateType: 'order', aggregateId, payload: {}, topic });
  const later = `strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour')`;

  it('refreshes the table by itself, and recovers without a reload when the app is reachable again', async () => {
    await h.add([message('o-1')]);
    await page.goto(url);
    await waitFor('the first row', async () => (await rows()) === '1');
    await h.add([message('o-2')]);
    await waitFor('the new row without a click', async () => (await rows()) === '2', 5_000);

    // The app goes away (connections refused, as during a restart), then listens again on the same port.
    const server = h.app.getHttpServer() as Server;
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await waitFor('"cannot reach" in the header', async () => (await page.locator('#connection').isVisible()) && (await page.locator('#connection').textContent()));
    expect(await page.locator('#connection').textContent()).toMatch(/Cannot reach the app \(Failed to fetch\); trying again every 1 s/);
    await h.add([message('o-3')]);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));

    await waitFor('the page back by itself', async () => (await rows()) === '3' && !(await page.locator('#connection').isVisible()), 5_000);
    // The counts come from the shared stats snapshot, read again every stats.refreshIntervalMs (5 s).
    await waitFor('the counts caught up', async () => (await page.locator('[data-count="pending"]').textContent()) === '3', 8_000);
    expect(await page.locator('#error').isVisible()).toBe(false);
  });

  it('shows a failed requeue inside the message dialog, in front, with the row read again', async () => {
    const [id] = await h.add([message('d-1')]);
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'dead', attempts = 5, last_error = 'partner down', dead_at = created_at, error_history = '[]'`);
    await page.goto(url);
    await page.locator('#messages tbody tr').first().click();
    await page.locator('#detail').waitFor({ state: 'visible' });
    // Another operator requeues it meanwhile.
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'pending', attempts = 0, dead_at = NULL WHERE id = ?`, [id]);
    answers = [true];
    await page.click('#detail-requeue');
    await page.locator('#detail-error').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-error').textContent()).toContain(`409: Message "${id}" is pending, not dead`);
    expect(await page.locator('#detail').isVisible()).toBe(true);
    // Not covered by the modal dialog: the topmost element at its place is the error itself.
    const inFront = await page.evaluate(`(() => {
      const element = document.querySelector('#detail-error');
      const box = element.getBoundingClientRect();
      return document.elementFromPoint(box.x + 5, box.y + box.height / 2) === element;
    })()`);
    expect(inFront).toBe(true);
    await waitFor('the dialog shows the row as it is now', async () => (await page.locator('#detail-title').textContent())?.endsWith('pending'));
    expect(await page.locator('#error').isVisible()).toBe(false);
  });

  it('retries a row in backoff now from its dialog, and the rows of a filter after confirming the count', async () => {
    const [one] = await h.add([message('r-1')]);
    const invoices = await h.add([message('i-1', 'invoices'), message('i-2', 'invoices')]);
    await h.dataSource.query(`UPDATE outbox_messages SET attempts = 2, last_error = 'broker down', next_attempt_at = ${later}`);
    const due = async () =>
      (await h.dataSource.query(`SELECT id FROM outbox_messages WHERE next_attempt_at <= strftime('%Y-%m-%d %H:%M:%f', 'now') AND attempts = 2 ORDER BY position`)).map(
        (row: { id: string }) => row.id,
      );
    await page.goto(url);
    await page.locator('#messages tbody tr', { hasText: 'r-1' }).click();
    await page.locator('#detail').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-retry-now').isEnabled()).toBe(true);
    await page.click('#detail-retry-now');
    await page.locator('#detail').waitFor({ state: 'hidden' });
    expect(await due()).toEqual([one]);

    await page.selectOption('#filters select[name=status]', 'retrying');
    await page.fill('#filters input[name=destination]', 'invoices');
    await page.click('#filters button[type=submit]');
    await waitFor('the two rows in backoff listed', async () => (await rows()) === '2');
    answers = [true];
    await page.click('#bulk-retry-now');
    await waitFor('both due now', async () => (await due()).length === 3);
    expect(dialogs).toEqual(['Retry now 2 message(s) waiting in backoff matching the filter?']);
    expect(await due()).toEqual([one, ...invoices]);
  });

  it('asks before pausing a destination no message has used, and shows the reason with the pause', async () => {
    await h.add([message('o-1')]);
    await page.goto(url);
    await page.fill('#pause-form input[name=destination]', 'ordres');
    await page.fill('#pause-form input[name=reason]', 'partner maintenance');
    answers = [true, false];
    await page.click('#pause-form button[type=submit]');
    await waitFor('the second question', async () => dialogs.length === 2);
    expect(dialogs[1]).toContain('No outbox row has ever used the destination "ordres"');
    expect(dialogs[1]).toContain('Pause "ordres" anyway?');
    expect(await h.dataSource.query('SELECT destination FROM outbox_messages_paused')).toEqual([]);

    answers = [true, true];
    await page.click('#pause-form button[type=submit]');
    await waitFor('the pause listed with its reason', async () => (await page.locator('#paused').textContent())?.includes('ordres (since'));
    expect(await page.locator('#paused').textContent()).toContain(': partner maintenance)');
    expect(await h.dataSource.query('SELECT destination, reason FROM outbox_messages_paused')).toEqual([{ destination: 'ordres', reason: 'partner maintenance' }]);
    expect(await page.locator('#pause-error').isVisible()).toBe(false);
  });
});
