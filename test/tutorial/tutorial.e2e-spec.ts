import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresAdmin } from '../support/databases';
import { installExample, packLibrary, readManifest, startExampleApp, type RunningApp } from '../support/example-app';
import { freePort } from '../support/free-port';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

const root = join(__dirname, '..', '..');
const example = join(root, 'examples', 'tutorial');

/**
 * docs/tutorial.md's app as a reader ends up with it: examples/tutorial copied to a directory outside
 * the repository (so nothing resolves from the repository's node_modules), the library installed
 * from its packed tarball, every other package from the app's own package.json (the npm cache
 * first), built with the app's own `npm run build`, started with `npm run start:prod`, and driven
 * over HTTP until its consumer has handled the event: on SQLite + TCP, then PostgreSQL + Kafka.
 */
describe('the tutorial app', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-tutorial-'));
  const appDir = join(workDir, 'shop');
  const started: RunningApp[] = [];

  beforeAll(async () => {
    await installExample(example, appDir, await packLibrary(workDir));
  }, 600_000);

  afterAll(async () => {
    await Promise.all(started.map((app) => app.stop()));
    rmSync(workDir, { recursive: true, force: true });
  });

  it('pins the versions the repository is tested with, and the tutorial’s install commands name them', () => {
    const rootManifest = readManifest(root);
    const rootVersions = { ...rootManifest.dependencies, ...rootManifest.devDependencies };
    const appManifest = readManifest(example);
    const appVersions = { ...appManifest.dependencies, ...appManifest.devDependencies };
    delete appVersions['@nest-outbox/outbox'];
    expect(Object.fromEntries(Object.keys(appVersions).map((name) => [name, rootVersions[name]]))).toEqual(appVersions);
    const tutorial = readFileSync(join(root, 'docs/tutorial.md'), 'utf8');
    const named = [...tutorial.matchAll(/(?<=\s)((?:@[\w-]+\/)?[\w.-]+)@(\d+\.\d+\.\d+)(?=\s)/g)].map(([, name, version]) => [name, version]);
    expect(named.map(([name]) => name)).toEqual(expect.arrayContaining(['@nestjs/cli', '@nestjs/typeorm', 'typeorm', '@nestjs/microservices', 'better-sqlite3', 'pg', 'kafkajs']));
    expect(Object.fromEntries(named.map(([name]) => [name, appVersions[name]]))).toEqual(Object.fromEntries(named));
  });

  it('builds with the library from the tarball, as an ES module', () => {
    const library = JSON.parse(readFileSync(join(appDir, 'node_modules/@nest-outbox/outbox/package.json'), 'utf8')) as { name: string };
    expect(library.name).toBe('@nest-outbox/outbox');
    expect(readFileSync(join(appDir, 'dist/main.js'), 'utf8')).toMatch(/^import .* from '\.\/app\.module\.js';$/m);
  });

  it('on SQLite + TCP, delivers an order placed over HTTP to its consumer', async () => {
    const app = await startApp(appDir, { SQLITE_FILE: join(workDir, 'shop.sqlite') });
    started.push(app);
    const id = await placeOrder(app);
    expect(await waitFor('the shipment made by the consumer over TCP', () => shipment(app, id), 30_000)).toMatchObject({ orderId: id, customerId: 'c-42' });
    expect(app.log()).toMatch(new RegExp(`Shipment prepared for order ${id} \\(event [0-9a-f-]{36} via TCP\\)`));
    await app.stop();
  }, 120_000);

  it('on PostgreSQL + Kafka, set by the environment alone, delivers an order to its consumer', async () => {
    const server = requireService('postgres');
    const database = `tutorial_${randomBytes(5).toString('hex')}`;
    await postgresAdmin(server, `CREATE DATABASE ${database}`);
    let app: RunningApp | undefined;
    try {
      const url = new URL(server);
      url.pathname = `/${database}`;
      app = await startApp(appDir, { DATABASE_URL: url.toString(), KAFKA_BROKERS: requireService('kafka'), ORDERS_TOPIC: `tutorial-${randomBytes(4).toString('hex')}` });
      started.push(app);
      const running = app;
      const id = await placeOrder(running);
      expect(await waitFor('the shipment made by the consumer over Kafka', () => shipment(running, id), 60_000)).toMatchObject({ orderId: id, customerId: 'c-42' });
      expect(running.log()).toMatch(new RegExp(`Shipment prepared for order ${id} \\(event [0-9a-f-]{36} via Kafka partition \\d+\\)`));
    } finally {
      await app?.stop(); // before the database goes
      await postgresAdmin(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  }, 180_000);
});

/** `npm run start:prod` with the consumer's TCP port free too; resolves once the HTTP server answers. */
async function startApp(cwd: string, env: Record<string, string>): Promise<RunningApp> {
  return startExampleApp(cwd, { ...env, TCP_PORT: String(await freePort()) }, (port) =>
    fetch(`http://127.0.0.1:${port}/shipments/none`).then((response) => response.status === 404),
  );
}

async function placeOrder(app: RunningApp): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${app.port}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: 'c-42', totalCents: 2500 }),
  });
  expect(response.status).toBe(201);
  const { id } = (await response.json()) as { id: string };
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  return id;
}

/** The order's shipment once the consumer's transaction has committed it; undefined (404) before. */
async function shipment(app: RunningApp, orderId: string): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${app.port}/shipments/${orderId}`);
  if (response.status === 404) return undefined;
  expect(response.status).toBe(200);
  return response.json();
}
