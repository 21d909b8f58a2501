import type { Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { waitFor } from '../support/wait-for';

/**
 * The console page in Chromium (SQLite, refreshing every second, pages of at most 100 rows): what an
 * operator met — pages opened and lost at the next refresh, rows of a refused filter left standing,
 * a published row's old error in red, a dialog whose buttons a long history pushed out of view, a
 * 404 for the icon, the poison section refreshing on a timer of its own, and a disabled Discard that
 * still looked red and clickable.
 */
describe('Outbox console page in Chromium: paging, filters, history and refresh details (SQLite)', () => {
  let h: ConsoleHarness;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let url: string;
  const notFound: string[] = [];
  const poisonRequests: number[] = [];

  beforeEach(async () => {
    h = await createConsoleHarness('sqlite', { noAuth: true, refreshIntervalMs: 1_000, maxPageSize: 100 });
    await h.app.listen(0, '127.0.0.1');
    url = `${await h.app.getUrl()}/outbox/`;
    browser = await launchChromium();
    page = await browser.context.newPage();
    notFound.length = 0;
    poisonRequests.length = 0;
    page.on('response', (response) => void (response.status() === 404 && notFound.push(response.url())));
    page.on('request', (request) => void (request.url().includes('/api/poison') && poisonRequests.push(Date.now())));
    // Confirm dialogs would block the page: none is expected here.
    page.on('dialog', (dialog) => void dialog.dismiss());
  });
  afterEach(async () => {
    await browser?.close();
    await h?.close();
  });

  const rows = async () => Number(await page.locator('#messages').getAttribute('data-rows'));
  const message = (aggregateId: string) => ({ type: 'orders.order-placed', aggregateType: 'order', aggregateId, payload: {} });
  // Each refresh writes the time into #updated: two changes of it are two refreshes.
  const twoRefreshes = async () => {
    for (let i = 0; i < 2; i++) {
      const before = await page.locator('#updated').textContent();
      await waitFor('a refresh', async () => (await page.locator('#updated').textContent()) !== before, 10_000);
    }
  };

  it('keeps the older pages an operator opened through auto-refresh, beyond the largest page', async () => {
    await h.add(Array.from({ length: 350 }, (_, i) => message(`o-${i}`)));
    // A slow network: each page of messages takes 200 ms, so refreshes (every second, up to four
    // pages each) overlap the operator's clicks on "More", as they did in a CI run.
    await page.route('**/api/messages?*', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await route.continue();
    });
    await page.goto(url);
    await waitFor('the first page', async () => (await rows()) === 50);
    for (let shown = 100; shown <= 350; shown += 50) {
      await page.locator('#more').click();
      await waitFor(`${shown} rows`, async () => (await rows()) >= shown);
    }
    expect(await rows()).toBe(350);
    await twoRefreshes();
    expect(await rows()).toBe(350);
    expect(await page.locator('#messages tbody tr').last().locator('td').first().textContent()).toBe('1');
  });

  it('clears the rows of the previous filter when a filter is refused, and asks for no icon', async () => {
    await h.add([message('o-1'), message('o-2')]);
    await page.goto(url);
    await waitFor('two rows', async () => (await rows()) === 2);
    await page.locator('#filters [name=id]').fill('not-an-id');
    await page.locator('#filters button[type=submit]').click();
    await waitFor('the refusal', async () => (await page.locator('#error').isVisible()) && (await page.locator('#error').textContent()));
    expect(await page.locator('#error').textContent()).toMatch(/^400: id must be a UUID/);
    expect(await rows()).toBe(0);
    expect(await page.locator('#messages tbody tr').count()).toBe(0);
    expect(notFound).toEqual([]);
  });

  it("shows a published row's last error as history, not in red; a long error history leaves the dialog's buttons in view", async () => {
    const [published, dead] = await h.add([message('p-1'), message('d-1')]);
    const history = JSON.stringify(Array.from({ length: 7 }, (_, i) => ({ at: `2026-01-01T10:00:0${i}.000Z`, error: `connect ECONNREFUSED 10.0.0.7:4100 (attempt ${i + 1}) `.repeat(10) })));
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'published', published_at = created_at, attempts = 2, last_error = 'broker down' WHERE id = ?`, [published]);
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'dead', dead_at = created_at, attempts = 7, last_error = 'broker down', error_history = ? WHERE id = ?`, [history, dead]);
    await page.goto(url);
    const color = (id: string) => page.locator(`#messages tbody tr[data-id="${id}"] td.error-cell`).evaluate((cell) => (globalThis as unknown as { getComputedStyle(element: unknown): { color: string } }).getComputedStyle(cell).color);
    await waitFor('both rows', async () => (await rows()) === 2);
    // Auto-refresh replaces the rows every second, and a row replaced while its style is read has none:
    // stop it, and read the colours once a refresh already under way has landed.
    await page.locator('#auto-refresh').uncheck();
    const colors = await waitFor('the rows’ colours', async () => {
      const [p, d] = [await color(published), await color(dead)];
      return p && d ? { published: p, dead: d } : undefined;
    });
    expect(colors).toEqual({ published: 'rgb(107, 115, 133)', dead: 'rgb(180, 35, 24)' });

    await page.setViewportSize({ width: 1400, height: 800 });
    await page.locator(`#messages tbody tr[data-id="${dead}"]`).click();
    await page.locator('#detail').waitFor({ state: 'visible' });
    // The dialog shows before the message's details arrive: wait for its error history.
    await waitFor('the error history', async () => (await page.locator('#detail-errors li').count()) === 7);
    const viewport = page.viewportSize()!;
    for (const button of ['#detail-requeue', '#detail-discard']) {
      const box = (await page.locator(button).boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
    }
  });

  it('shows a Discard it cannot use as disabled (grey, not-allowed cursor), and a usable one in red', async () => {
    const [published, dead] = await h.add([message('p-2'), message('d-2')]);
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'published', published_at = created_at, attempts = 1 WHERE id = ?`, [published]);
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'dead', dead_at = created_at, attempts = 7, last_error = 'broker down' WHERE id = ?`, [dead]);
    const discardFor = async (id: string) => {
      await page.goto(url);
      await waitFor('the rows', async () => (await rows()) === 2);
      await page.locator('#auto-refresh').uncheck();
      await page.locator(`#messages tbody tr[data-id="${id}"]`).click();
      await page.locator('#detail').waitFor({ state: 'visible' });
      // The buttons are set once the message's details arrive.
      await waitFor('the message’s details', async () => (await page.locator('#detail-fields').textContent())?.includes(id));
      return page.locator('#detail-discard').evaluate((button) => {
        const style = (globalThis as unknown as { getComputedStyle(element: unknown): { color: string; cursor: string } }).getComputedStyle(button);
        return { disabled: (button as unknown as { disabled: boolean }).disabled, color: style.color, cursor: style.cursor };
      });
    };
    expect(await discardFor(published)).toEqual({ disabled: true, color: 'rgb(107, 115, 133)', cursor: 'not-allowed' });
    expect(await discardFor(dead)).toEqual({ disabled: false, color: 'rgb(180, 35, 24)', cursor: 'pointer' });
  });

  it('refreshes the poison section at the page\'s interval, and not while auto-refresh is off', async () => {
    await page.goto(url);
    await waitFor('three poison requests a second apart', () => poisonRequests.length >= 3, 10_000);
    await page.locator('#auto-refresh').uncheck();
    const asked = poisonRequests.length;
    await twoRefreshesOff();
    expect(poisonRequests.length).toBe(asked);

    // With auto-refresh off nothing changes #updated: wait for the time two ticks take on the page's own clock instead.
    async function twoRefreshesOff(): Promise<void> {
      const started = await page.evaluate<number>('performance.now()');
      await waitFor('two ticks of the page', async () => (await page.evaluate<number>('performance.now()')) - started > 2_200, 10_000);
    }
  });
});
