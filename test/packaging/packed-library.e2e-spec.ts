import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { privatePostgresSchema } from '../support/databases';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/**
 * The library as a user gets it: `npm pack` in libs/outbox (which builds first), the tarball's
 * contents checked, then installed into a fresh app under test/ that publishes an event on
 * PostgreSQL + the Kafka test broker. Nest, TypeORM and the drivers come from the repository's
 * node_modules (the app sits below it); the library itself only from the tarball.
 */
describe('the packed library', () => {
  const appDir = mkdtempSync(join(__dirname, '.app-'));
  let tarball: string;

  afterAll(() => rmSync(appDir, { recursive: true, force: true }));

  it('packs a build with LICENSE, README and compiled code only', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', appDir], { cwd: join(root, 'libs/outbox'), maxBuffer: 64 << 20 });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(appDir, packed.filename);
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/outbox-cli.main.js', 'dist/console/assets/index.html']));
    expect(files).toEqual(expect.arrayContaining(['dist/ddl/postgres/outbox.up.sql', 'dist/ddl/sqlite/inbox.down.sql', 'dist/ddl/mariadb/poison.up.sql']));
    expect(files.filter((path) => !/^(LICENSE|README\.md|package\.json|dist\/.+\.(js|d\.ts|html|css)|dist\/ddl\/(postgres|mariadb|sqlite)\/(outbox|inbox|poison)\.(up|down)\.sql)$/.test(path))).toEqual([]);
    expect(files.filter((path) => /\.(spec|e2e-spec|contract)\.|(^|\/)test\//.test(path))).toEqual([]);
  }, 180_000);

  it('installs into a fresh app that publishes an event on PostgreSQL and Kafka', async () => {
    expect(tarball).toBeDefined();
    const brokers = requireService('kafka');
    const database = await privatePostgresSchema('packed');
    const topic = `packed-${randomBytes(4).toString('hex')}`;
    const aggregateId = `greeting-${randomBytes(4).toString('hex')}`;
    const reader = new KafkaTopicReader(brokers.split(','), topic);
    try {
      cpSync(join(__dirname, 'app'), appDir, { recursive: true });
      // Peers are the app's own choice (here: the repository's); uuid comes from the npm cache when it has it.
      await run('npm', ['install', '--no-save', '--prefer-offline', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', tarball], { cwd: appDir });
      await reader.start();
      const { stdout } = await run('node', ['main.mjs'], {
        cwd: appDir,
        env: { ...process.env, DATABASE_URL: database.url, DATABASE_SCHEMA: database.schema, KAFKA_BROKERS: brokers, TOPIC: topic, AGGREGATE_ID: aggregateId },
      });
      const result = JSON.parse(stdout.trim().split('\n').pop()!) as { status: string; library: string };
      expect(result.library).toBe(join(appDir, 'node_modules/@nest-outbox/outbox/dist/index.js'));
      expect(result.status).toBe('published');
      await waitFor('the packed app’s event on Kafka', () => reader.forKey(aggregateId).length === 1, 30_000);
      expect(reader.forKey(aggregateId)[0].value).toMatchObject({ type: 'packed.hello', aggregateId, payload: { hello: 'from the tarball' } });
    } finally {
      await reader.stop();
      await database.drop();
    }
  }, 180_000);
});
