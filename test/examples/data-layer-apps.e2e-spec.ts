import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postgresAdmin, postgresRows as rows } from '../support/databases';
import { installExample, packLibrary, readManifest, startExampleApp, type RunningApp } from '../support/example-app';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const examples = join(__dirname, '..', '..', 'examples');

interface ExampleApp {
  name: string;
  /** The app's migration of the outbox tables, and the `nest-outbox sql --format` that writes it. */
  outboxMigration: { file: string; format: 'prisma' | 'drizzle' };
  /** Environment of the app's own `npm run build`. */
  buildEnv: Record<string, string>;
  /** Creates the tables the way the app's data layer does, where the app does not do it at startup. */
  migrate(appDir: string, databaseUrl: string): Promise<void>;
}

const apps: ExampleApp[] = [
  {
    name: 'prisma',
    outboxMigration: { file: 'prisma/migrations/20261124081618_outbox/migration.sql', format: 'prisma' },
    // `prisma generate` only checks that the schema engine it names exists; it is not downloadable offline.
    buildEnv: { PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false', CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    // `npm run migrate` (`prisma migrate deploy`) needs Prisma's native schema engine, which cannot be
    // downloaded here: the app's own offline recipe applies each migration.sql and records it.
    migrate: async (appDir, databaseUrl) => {
      expect(readdirSync(join(appDir, 'prisma', 'migrations')).filter((name) => name !== 'migration_lock.toml').sort()).toEqual([expect.stringMatching(/_orders$/), expect.stringMatching(/_outbox$/)]);
      await run('npm', ['run', 'migrate:offline'], { cwd: appDir, env: { ...process.env, DATABASE_URL: databaseUrl } });
    },
  },
  // The Drizzle app runs drizzle-orm's migrator over drizzle/ at startup.
  { name: 'drizzle', outboxMigration: { file: 'drizzle/0001_outbox.sql', format: 'drizzle' }, buildEnv: {}, migrate: async () => undefined },
];

/**
 * examples/prisma and examples/drizzle as a new user has them: each copied outside the repository,
 * the library installed from its packed tarball, built with the app's own script, started against a
 * database and a Kafka topic of its own, driven over HTTP; a plain kafkajs consumer (KafkaTopicReader)
 * reads the topic. No TypeORM anywhere: the apps use `OutboxModule.forRoot({ connection })`.
 */
describe('the example apps per data layer', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-examples-'));
  let tarball: string;

  beforeAll(async () => {
    tarball = await packLibrary(workDir);
  }, 300_000);

  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  describe.each(apps)('examples/$name', (example) => {
    const appDir = join(workDir, example.name);

    beforeAll(async () => {
      await installExample(join(examples, example.name), appDir, tarball, example.buildEnv);
    }, 600_000);

    it('pins the versions the repository is tested with', () => {
      const rootManifest = readManifest(join(examples, '..'));
      const rootVersions = { ...rootManifest.dependencies, ...rootManifest.devDependencies };
      const appManifest = readManifest(join(examples, example.name));
      const appVersions: Record<string, string> = { ...appManifest.dependencies, ...appManifest.devDependencies };
      delete appVersions['@nest-outbox/outbox'];
      expect(Object.fromEntries(Object.keys(appVersions).map((name) => [name, rootVersions[name]]))).toEqual(appVersions);
    });

    it('builds as an ES module with the library from the tarball, and asks for no TypeORM, and npm installs none', () => {
      expect(JSON.parse(readFileSync(join(appDir, 'node_modules/@nest-outbox/outbox/package.json'), 'utf8'))).toMatchObject({ name: '@nest-outbox/outbox' });
      expect(readFileSync(join(appDir, 'dist/main.js'), 'utf8')).toMatch(/^import .* from '\.\/app\.module\.js';$/m);
      const manifest = readManifest(appDir);
      expect(Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => /typeorm/.test(name))).toEqual([]);
      expect(builtFiles(join(appDir, 'dist')).filter((file) => /from '(@nestjs\/)?typeorm'/.test(readFileSync(file, 'utf8')))).toEqual([]);
      // Both are optional peers of the library: npm's peer resolution leaves them out of the installed app.
      expect(['typeorm', '@nestjs/typeorm'].filter((name) => existsSync(join(appDir, 'node_modules', name)))).toEqual([]);
    });

    it('keeps the outbox migration that the packed CLI writes today', async () => {
      const { file, format } = example.outboxMigration;
      const { stdout } = await run('npx', ['--no-install', 'nest-outbox', 'sql', '--dialect', 'postgres', '--format', format], { cwd: appDir });
      expect(readFileSync(join(appDir, file), 'utf8').trimEnd()).toBe(stdout.trimEnd());
    });

    it('publishes the committed order’s event to Kafka, and nothing of the order rolled back', async () => {
      const server = requireService('postgres');
      const brokers = requireService('kafka');
      const database = `example_${example.name}_${randomBytes(4).toString('hex')}`;
      const topic = `example-${example.name}-${randomBytes(4).toString('hex')}`;
      const url = new URL(server);
      url.pathname = `/${database}`;
      const databaseUrl = url.toString();
      await postgresAdmin(server, `CREATE DATABASE ${database}`);
      const reader = new KafkaTopicReader(brokers.split(','), topic);
      let app: RunningApp | undefined;
      try {
        await example.migrate(appDir, databaseUrl);
        await reader.start();
        app = await startExampleApp(appDir, { DATABASE_URL: databaseUrl, KAFKA_BROKERS: brokers, ORDERS_TOPIC: topic }, (port) =>
          fetch(`http://127.0.0.1:${port}/orders`).then((response) => response.status === 404),
        );

        const rejected = await postOrder(app, 'orders/rejected', 'c-rejected');
        expect(rejected.status).toBe(422);
        expect(((await rejected.json()) as { message: string }).message).toMatch(/rejected after its event was added/);
        const placed = await postOrder(app, 'orders', 'c-placed');
        expect(placed.status).toBe(201);
        const { id } = (await placed.json()) as { id: string };
        expect(id).toMatch(/^[0-9a-f-]{36}$/);

        const [record] = await waitFor('the placed order’s event on Kafka', () => reader.forKey(id).length > 0 && reader.forKey(id), 60_000);
        expect(record.value).toEqual({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          type: 'orders.order-placed',
          version: 1,
          aggregateType: 'order',
          aggregateId: id,
          occurredAt: expect.any(String),
          headers: {},
          payload: { id, customerId: 'c-placed', totalCents: 2500 },
        });
        expect(record.headers['outbox-aggregate-id']).toBe(id);
        // The rolled-back order left no row to publish: the committed one is the topic's only record.
        expect(reader.records).toHaveLength(1);
        expect(await rows(databaseUrl, 'SELECT id::text, customer_id FROM orders')).toEqual([{ id, customer_id: 'c-placed' }]);
        const published = await waitFor(
          'the outbox row marked published',
          async () => {
            const outbox = await rows(databaseUrl, 'SELECT aggregate_id, destination, status FROM outbox_messages');
            return outbox.every((row) => row.status === 'published') && outbox;
          },
          30_000,
        );
        expect(published).toEqual([{ aggregate_id: id, destination: topic, status: 'published' }]);
      } finally {
        await app?.stop(); // before the database goes
        await reader.stop();
        await postgresAdmin(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      }
    }, 180_000);
  });
});

function postOrder(app: RunningApp, path: string, customerId: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${app.port}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, totalCents: 2500 }),
  });
}

function builtFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js')).map((file) => join(dir, file));
}
