import { randomBytes } from 'node:crypto';
import { Module, type INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';
import { OutboxConsoleModule, consoleBasicAuth } from '@nest-outbox/outbox/console';
import { OutboxTenants, OutboxTenantsModule } from '@nest-outbox/outbox/tenants';
import { launchChromium } from '../support/chromium';
import { startTenantsApp, createTenantDatabase, dropTenantDatabases } from './tenant-database.fixtures';
import { RecordingTransport } from '../support/recording.transport';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';

const operator = { username: 'ops', password: 'on-call' };

/**
 * The console over tenant outboxes (`OutboxConsoleModule.forRoot({ tenants: true })`), through its
 * HTTP API on real tenant databases: the list of tenants with their counts, each tenant's own rows
 * at `<path>/<tenant>/api/…`, a requeue that the tenant's relay publishes, and an unknown tenant
 * refused only behind the guard.
 */
describe('tenant databases: the console lists tenant outboxes and shows each one\'s rows', () => {
  const suffix = randomBytes(4).toString('hex');
  const server = requireService('postgres');
  const names = { acme: `tenant_console_acme_${suffix}`, globex: `tenant_console_globex_${suffix}` };
  const urls: Record<string, string> = {};
  const transport = new RecordingTransport();
  let app: INestApplication;
  let outboxes: OutboxTenants;

  const tenantDatabase = (name: string) => createTenantDatabase(server, name);

  /** Commits one event of the tenant; `before` runs with its id before the commit. */
  async function commitEvent(tenant: string, options: { delayMs?: number; before?: (id: string) => void } = {}): Promise<string> {
    const client = new Client({ connectionString: urls[tenant] });
    await client.connect();
    try {
      await client.query('BEGIN');
      const [id] = await outboxes.add(tenant, client, { type: 'tenants.note-written', aggregateType: 'note', aggregateId: `${tenant}-${randomBytes(3).toString('hex')}`, payload: { tenant }, delayMs: options.delayMs });
      options.before?.(id);
      await client.query('COMMIT');
      void outboxes.wake(tenant);
      return id;
    } finally {
      await client.end();
    }
  }

  const get = (path: string) => request(app.getHttpServer()).get(`/ops/tenants${path}`).auth(operator.username, operator.password);
  // Actions are JSON posts (the console's guard against cross-site forms).
  const post = (path: string) => request(app.getHttpServer()).post(`/ops/tenants${path}`).auth(operator.username, operator.password).send({});

  beforeAll(async () => {
    urls.acme = await tenantDatabase(names.acme);
    urls.globex = await tenantDatabase(names.globex);
    @Module({
      imports: [
        OutboxTenantsModule.forRoot({
          tenants: () => [{ id: 'acme', url: urls.acme }, { id: 'globex', url: urls.globex }],
          transport, defaultTopic: `tenant-console-${suffix}`, maxAttempts: 1,
          pollIntervalMs: 200, refreshIntervalMs: 60_000, shutdownTimeoutMs: 2_000,
        }),
        OutboxConsoleModule.forRoot({ path: 'ops/tenants', tenants: true, guard: consoleBasicAuth(operator) }),
      ],
    })
    class TenantConsoleApp {}
    ({ app, outboxes } = await startTenantsApp(TenantConsoleApp, silentLogger, { listen: true }));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await dropTenantDatabases(server, Object.values(names));
  }, 60_000);

  it('lists the tenants with their counts, shows each tenant\'s rows, and requeues a dead row that its relay then publishes', async () => {
    // acme's event is refused once and, with one attempt, goes dead; globex's waits 10 minutes.
    const dead = await commitEvent('acme', { before: (id) => transport.failTimes(id, 1) });
    const later = await commitEvent('globex', { delayMs: 600_000 });

    // Counts come from each tenant's stats, cached up to 5 s: asked until they show the commits.
    const tenants = await waitFor('the tenant list with acme\'s dead row and globex\'s pending one', async () => {
      const { body } = await get('/api/tenants').expect(200);
      const byId = Object.fromEntries((body as Array<{ id: string; counts?: { dead: number; pending: number } }>).map((tenant) => [tenant.id, tenant]));
      return byId.acme?.counts?.dead === 1 && byId.globex?.counts?.pending === 1 && body;
    }, 15_000);
    expect(tenants).toEqual([
      { id: 'acme', state: 'open', counts: { pending: 0, inFlight: 0, retrying: 0, dead: 1, oldestPendingAgeMs: null } },
      // A row due later counts as pending, neither as retrying (it never failed) nor as lag.
      { id: 'globex', state: 'open', counts: { pending: 1, inFlight: 0, retrying: 0, dead: 0, oldestPendingAgeMs: null } },
    ]);
    const page = await get('/').expect(200);
    expect(page.text).toMatch(/<a href="acme\/">acme<\/a>/);
    expect(page.text).toMatch(/<a href="globex\/">globex<\/a>/);

    // Each tenant's console is the one-outbox console over that tenant's table only.
    const tenantPage = await get('/acme/').expect(200);
    expect(tenantPage.text).toContain('tenant acme');
    expect(tenantPage.text).toContain('<base href="/ops/tenants/acme/">');
    const acmeDead = (await get('/acme/api/messages?status=dead').expect(200)).body as { messages: Array<{ id: string }> };
    expect(acmeDead.messages.map((message) => message.id)).toEqual([dead]);
    expect(((await get('/globex/api/messages?status=dead').expect(200)).body as { messages: unknown[] }).messages).toEqual([]);
    const globexPending = (await get('/globex/api/messages?status=pending').expect(200)).body as { messages: Array<{ id: string }> };
    expect(globexPending.messages.map((message) => message.id)).toEqual([later]);
    expect(((await get(`/acme/api/messages/${dead}`).expect(200)).body as { id: string; payload: unknown }).payload).toEqual({ tenant: 'acme' });
    expect(((await get('/acme/api/summary?fresh=true').expect(200)).body as { stats: { dead: number } }).stats.dead).toBe(1);

    // A requeue on acme's console: acme's relay is woken and publishes the row.
    await post(`/acme/api/messages/${dead}/requeue`).expect(200, { id: dead, status: 'pending' });
    await waitFor('acme\'s requeued row to be published', () => transport.delivered.some((message) => message.envelope.id === dead), 10_000);
    // Not another tenant's row: globex has no such id.
    await post(`/globex/api/messages/${dead}/requeue`).expect(404);

    // A pause is the tenant's own: globex's destination paused, acme's not.
    const topic = `tenant-console-${suffix}`;
    await request(app.getHttpServer()).post('/ops/tenants/globex/api/destinations/pause').auth(operator.username, operator.password)
      .send({ destination: topic, reason: 'consumer fix', confirmUnknown: true }).expect(200, { destination: topic, paused: true, changed: true });
    expect(((await get('/globex/api/destinations/paused').expect(200)).body as Array<{ destination: string }>).map((paused) => paused.destination)).toEqual([topic]);
    expect((await get('/acme/api/destinations/paused').expect(200)).body).toEqual([]);
    await request(app.getHttpServer()).post('/ops/tenants/globex/api/destinations/resume').auth(operator.username, operator.password)
      .send({ destination: topic }).expect(200, { destination: topic, paused: false, changed: true });
  }, 60_000);

  it('refuses an unknown tenant with 404 naming it, and only behind the guard', async () => {
    const unknown = await get('/nobody/api/summary').expect(404);
    expect(unknown.body.message).toContain('No tenant "nobody"');
    // Without credentials: 401 whether the tenant exists or not, so the guard tells no one which tenants there are.
    await request(app.getHttpServer()).get('/ops/tenants/nobody/api/summary').expect(401);
    await request(app.getHttpServer()).get('/ops/tenants/acme/api/summary').expect(401);
    await request(app.getHttpServer()).get('/ops/tenants/api/tenants').expect(401);
  });

  it('shows the tenants in Chromium, and a tenant\'s console one click away with its dead row', async () => {
    const dead = await commitEvent('acme', { before: (id) => transport.failTimes(id, 1) });
    const browser = await launchChromium({ httpCredentials: operator });
    try {
      const page = await browser.context.newPage();
      await page.goto(`${await app.getUrl()}/ops/tenants/`);
      // The list is rendered on the server from stats cached up to 5 s: reloaded until it shows the dead row.
      await waitFor('acme\'s dead row in the tenant list', async () => {
        const cells = await page.locator('#tenants tr[data-tenant="acme"] td').allTextContents();
        if (cells[5] === '1') return true;
        await page.reload();
        return false;
      }, 15_000);
      expect(await page.locator('#tenants tbody tr').count()).toBe(2);
      expect(await page.locator('#tenants tr[data-tenant="globex"] td').nth(1).textContent()).toBe('open');

      await page.click('#tenants a[href="acme/"]');
      await page.waitForURL(/\/ops\/tenants\/acme\/$/);
      expect(await page.locator('h1').textContent()).toContain('tenant acme');
      await waitFor('the dead count of acme\'s console', async () => (await page.locator('[data-count="dead"]').textContent()) === '1');
      await page.selectOption('#filters select[name=status]', 'dead');
      await page.click('#filters button[type=submit]');
      await waitFor('acme\'s dead row in its console', async () => (await page.locator('#messages').getAttribute('data-rows')) === '1');
      expect(await page.locator('#messages tbody').textContent()).toContain(dead.slice(0, 8));
    } finally {
      await browser.close();
    }
  }, 60_000);
});
