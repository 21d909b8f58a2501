import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installExample, packLibrary, readManifest, startExampleApp, type RunningApp } from '../support/example-app';
import { freePort, freePorts } from '../support/free-port';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const example = join(root, 'examples', 'tutorial');

/**
 * docs/tutorial.md's app as a reader ends up with it: examples/tutorial copied to a directory outside
 * the repository (so nothing resolves from the repository's node_modules), the library installed
 * from its packed tarball, every other package from the app's own package.json (the npm cache
 * first), built with the app's own `npm run build`, started with `npm run start:prod`, and driven
 * over HTTP until its consumer has handled the event: on SQLite + TCP, then on PostgreSQL + Kafka
 * with part 2's commands as written.
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

  /**
   * Part 2 as a reader runs it: every command of the page, as written, from `shop` beside a
   * `nest-outbox` that is this repository; the repository's script starts PostgreSQL and the Kafka
   * test broker on the ports the page's URLs name. Those ports come from POSTGRES_PORT and
   * KAFKA_PORT, as the page tells a reader whose 5432 or 9092 is taken: free ones here, so that a
   * busy machine does not collide. The Docker command is the one line not run (no Docker in CI).
   */
  describe('part 2, its commands as the page writes them', () => {
    const env = readerEnv();
    const shell = (line: string) => run('bash', ['-e', '-c', line], { cwd: appDir, env, maxBuffer: 64 << 20 });
    let part2: Part2Commands;
    let servicesStarted = false;

    beforeAll(async () => {
      part2 = part2Commands();
      symlinkSync(root, join(workDir, 'nest-outbox'));
      const [postgresPort, kafkaPort] = await freePorts(2);
      env.POSTGRES_PORT = String(postgresPort);
      env.KAFKA_PORT = String(kafkaPort);
    });

    afterAll(async () => {
      if (!servicesStarted) return;
      const services = realpathSync(join(appDir, '.services')); // the script keeps it under /tmp when appDir is not reachable by the user postgres
      await shell(part2.servicesDown);
      if (!services.startsWith(workDir)) rmSync(services, { recursive: true, force: true });
    }, 120_000);

    it('installs the drivers and builds', async () => {
      await shell(part2.drivers);
      const installed = (name: string) => (JSON.parse(readFileSync(join(appDir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
      expect({ pg: installed('pg'), kafkajs: installed('kafkajs') }).toEqual({ pg: '8.23.1', kafkajs: '2.2.4' });
    }, 300_000);

    it('starts PostgreSQL and Kafka with the repository’s script, on the URLs’ ports', async () => {
      servicesStarted = true;
      const { stderr } = await shell(part2.servicesUp);
      expect(stderr).toMatch(new RegExp(`postgres ready on 127\\.0\\.0\\.1:${env.POSTGRES_PORT} `));
      expect(stderr).toMatch(new RegExp(`kafka ready on 127\\.0\\.0\\.1:${env.KAFKA_PORT} `));
    }, 180_000);

    it('delivers an order to its consumer in the group shop-shipping-server, and a restart listens within 20 s', async () => {
      const first = await startApp(appDir, env, part2.start);
      started.push(first);
      const id = await placeOrder(first);
      expect(await waitFor('the shipment made by the consumer over Kafka', () => shipment(first, id), 60_000)).toMatchObject({ orderId: id, customerId: 'c-42' });
      expect(first.log()).toMatch(new RegExp(`Shipment prepared for order ${id} \\(event [0-9a-f-]{36} via Kafka partition \\d+\\)`));
      expect(first.log()).toMatch(/Consumer has joined the group \{.*"groupId":"shop-shipping-server"/);
      await first.stop();

      // Right after a stop the group waits for the member that left, up to its session timeout (10 s here; 29 s with kafkajs's default).
      const restartedAt = Date.now();
      const second = await startApp(appDir, env, part2.start);
      started.push(second);
      expect(Date.now() - restartedAt).toBeLessThan(20_000);
      const next = await placeOrder(second);
      expect(await waitFor('the restarted app’s shipment', () => shipment(second, next), 60_000)).toMatchObject({ orderId: next });
      await second.stop();
    }, 180_000);

    it('offers Docker a compose file with the same database, user and ports (not run: CI has no Docker)', () => {
      expect(part2.docker).toBe('docker compose -f ../nest-outbox/examples/tutorial/compose.yaml up -d --wait');
      const compose = readFileSync(join(example, 'compose.yaml'), 'utf8');
      for (const line of ['POSTGRES_DB: shop', 'POSTGRES_HOST_AUTH_METHOD: trust', "'127.0.0.1:${POSTGRES_PORT:-5432}:5432'", 'PLAINTEXT://localhost:${KAFKA_PORT:-9092}', "'127.0.0.1:${KAFKA_PORT:-9092}:9092'"]) {
        expect(compose).toContain(line);
      }
    });
  });
});

/** `npm run start:prod` (or the page's line) with the consumer's TCP port free too; resolves once the HTTP server answers. */
async function startApp(cwd: string, env: Record<string, string>, shellLine?: string): Promise<RunningApp> {
  return startExampleApp(
    cwd,
    { ...env, TCP_PORT: String(await freePort()) },
    (port) => fetch(`http://127.0.0.1:${port}/shipments/none`).then((response) => response.status === 404),
    shellLine,
  );
}

interface Part2Commands {
  drivers: string;
  docker: string;
  servicesUp: string;
  servicesDown: string;
  start: string;
}

/** The shell blocks of the page's part 2, in the order the page gives them. */
function part2Commands(): Part2Commands {
  const page = readFileSync(join(root, 'docs/tutorial.md'), 'utf8');
  const part2 = page.slice(page.indexOf('## Part 2'), page.indexOf('## Next'));
  const blocks = [...part2.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, block]) => block.trim());
  expect(blocks).toEqual([
    'npm install pg@8.23.1 kafkajs@2.2.4\nnpm run build',
    'export POSTGRES_PORT=15432 KAFKA_PORT=19092', // an example: the test sets both to free ports
    expect.stringMatching(/^docker compose /),
    expect.stringMatching(/ bash \.\.\/nest-outbox\/scripts\/services\.sh up postgres kafka$/),
    'bash ../nest-outbox/scripts/services.sh down',
    expect.stringMatching(/^DATABASE_URL=postgres:\/\/\S+ KAFKA_BROKERS=\S+ npm run start:prod$/),
  ]);
  const [drivers, , docker, servicesUp, servicesDown, start] = blocks;
  return { drivers, docker, servicesUp, servicesDown, start };
}

/** This process's environment without the test suite's own service settings (OUTBOX_*): a reader has none. */
function readerEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith('OUTBOX_')));
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
