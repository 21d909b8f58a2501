import { OutboxConfigurationError } from '@nest-outbox/outbox';
import { consoleBasicAuth } from '@nest-outbox/outbox/console';
import { launchChromium } from '../support/chromium';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { waitFor } from '../support/wait-for';

/**
 * The documented console guard in a real Chromium: HTTP Basic with its challenge, which a browser
 * answers by itself once it has the credentials — the page, its assets and its API calls all pass.
 */
describe('Outbox console behind consoleBasicAuth, in Chromium (SQLite)', () => {
  let h: ConsoleHarness;
  let url: string;
  const browsers: Array<Awaited<ReturnType<typeof launchChromium>>> = [];

  beforeAll(async () => {
    h = await createConsoleHarness('sqlite', { guard: consoleBasicAuth({ username: 'ops', password: 'correct horse' }), refreshIntervalMs: 1_000 });
    await h.app.listen(0, '127.0.0.1');
    url = `${await h.app.getUrl()}/outbox/`;
    await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-1', payload: {} }]);
  });
  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await h?.close();
  });

  const open = async (httpCredentials?: { username: string; password: string }) => {
    const browser = await launchChromium({ httpCredentials });
    browsers.push(browser);
    const page = await browser.context.newPage();
    return { page, response: await page.goto(url) };
  };

  it('challenges a request without credentials: 401 with WWW-Authenticate: Basic, which a browser must answer', async () => {
    const plain = await fetch(url);
    expect(plain.status).toBe(401);
    expect(plain.headers.get('www-authenticate')).toBe('Basic realm="Outbox console", charset="UTF-8"');
    // Headless Chromium has no prompt: with nothing to answer the challenge with, it gives up on it.
    await expect(open()).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
  });

  it('serves the page, its assets and its API to a browser that has the credentials', async () => {
    const { page, response } = await open({ username: 'ops', password: 'correct horse' });
    expect(response?.status()).toBe(200);
    await waitFor('the page filled from the API', async () => (await page.locator('#messages').getAttribute('data-rows')) === '1');
    expect(await page.locator('#error').isVisible()).toBe(false);
    expect(await page.locator('#connection').isVisible()).toBe(false);
  });

  it('refuses a wrong password with the challenge again', async () => {
    const { response } = await open({ username: 'ops', password: 'wrong horse' });
    expect(response?.status()).toBe(401);
    const api = await fetch(`${url}api/summary`, { headers: { authorization: `Basic ${Buffer.from('ops:correct horsf').toString('base64')}` } });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
  });

  it('refuses a missing password when the module is declared, without showing the value', () => {
    expect(() => consoleBasicAuth({ username: 'ops', password: process.env.OUTBOX_UNSET_PASSWORD as string })).toThrow(OutboxConfigurationError);
    expect(() => consoleBasicAuth({ username: 'ops', password: process.env.OUTBOX_UNSET_PASSWORD as string })).toThrow(
      'OutboxConsoleModule option "guard: consoleBasicAuth password" must be a non-empty string (check the variable it is read from); got "undefined".',
    );
    expect(() => consoleBasicAuth({ username: 'o:ps', password: 'x' })).toThrow(/username" must be a non-empty string without ":"/);
  });
});
