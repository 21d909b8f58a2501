import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresAdmin, postgresRows as rows } from '../support/databases';
import { installExample, packLibrary, readManifest, startExampleApp, type RunningApp } from '../support/example-app';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

const root = join(__dirname, '..', '..');
const example = join(root, 'examples', 'several-outboxes');
const REGIONS = ['eu', 'us', 'latam'] as const;

/**
 * docs/several-outboxes.md's app (examples/several-outboxes, whose files the page's blocks are:
 * `npm run docs:verify`), as a reader has it: copied out of the repository, the library from its
 * packed tarball, the other packages from the page's install line, built with its own script, then
 * started against three databases of the test PostgreSQL (eu: TypeORM, table mode; us: TypeORM, WAL
 * mode; latam: a pg pool, no TypeORM) and the Kafka test broker. Each outbox's event is read from
 * Kafka by a plain consumer.
 */
describe('docs/several-outboxes.md as an app', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-several-outboxes-'));
  const appDir = join(workDir, 'regions');
  const suffix = randomBytes(4).toString('hex');
  const databases = Object.fromEntries(REGIONS.map((region) => [region, `regions_${region}_${suffix}`])) as Record<(typeof REGIONS)[number], string>;
  const slotName = `regions_us_${suffix}`;
  let server: string;
  let app: RunningApp | undefined;

  const urlOf = (database: string) => {
    const url = new URL(server);
    url.pathname = `/${database}`;
    return url.toString();
  };

  beforeAll(async () => {
    server = requireService('postgres');
    requireService('kafka');
    const tarball = await packLibrary(workDir);
    await installExample(example, appDir, tarball);
    for (const database of Object.values(databases)) await postgresAdmin(server, `CREATE DATABASE ${database}`);
  }, 900_000);

  afterAll(async () => {
    await app?.stop(); // before its databases go
    if (server) {
      // A slot holds its database: drop it first, or DROP DATABASE fails.
      await postgresAdmin(server, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '${slotName}'`);
      for (const database of Object.values(databases)) await postgresAdmin(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
    rmSync(workDir, { recursive: true, force: true });
  }, 120_000);

  it('installs what the page says to install, and nothing it does not say', () => {
    const page = readFileSync(join(root, 'docs/several-outboxes.md'), 'utf8');
    const installs = [...page.matchAll(/^npm install (--save-dev )?(.+)$/gm)].map(([, dev, packages]) => ({ dev: dev !== undefined, names: packages.split(' ').map(packageName) }));
    const manifest = readManifest(example);
    const nestNew = ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', 'reflect-metadata', 'rxjs', '@nestjs/cli', '@types/express', '@types/node', 'typescript'];
    const added = (deps: Record<string, string>) => Object.keys(deps).filter((name) => !nestNew.includes(name)).sort();
    expect(installs.filter((line) => !line.dev).flatMap((line) => line.names).sort()).toEqual(added(manifest.dependencies));
    expect(installs.filter((line) => line.dev).flatMap((line) => line.names).sort()).toEqual(added(manifest.devDependencies));
    expect(added(manifest.dependencies)).toEqual(expect.arrayContaining(['pg-logical-replication', 'kafkajs', '@nestjs/microservices']));
    expect(added(manifest.devDependencies)).toEqual(['@types/pg']);
    // The versions the repository is tested with, and the page's install lines pin those too.
    const tested: Record<string, string> = { ...readManifest(root).dependencies, ...readManifest(root).devDependencies };
    const pinned = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }).filter(([name]) => name !== '@nest-outbox/outbox');
    expect(Object.fromEntries(pinned.map(([name]) => [name, tested[name]]))).toEqual(Object.fromEntries(pinned));
    for (const [name, version] of pinned.filter(([name]) => !nestNew.includes(name))) expect(page).toContain(`${name}@${version}`);
  });

  it('publishes each outbox’s event from its own database, says which outbox each startup line is about, and leaves the WAL outbox’s table empty', async () => {
    const topics = { orders: `regions-orders-${suffix}`, refunds: `regions-refunds-${suffix}` };
    const brokers = requireService('kafka');
    const orders = new KafkaTopicReader(brokers.split(','), topics.orders);
    const refunds = new KafkaTopicReader(brokers.split(','), topics.refunds);
    await orders.start();
    await refunds.start();
    try {
      app = await startExampleApp(
        appDir,
        {
          EU_DATABASE_URL: urlOf(databases.eu),
          US_DATABASE_URL: urlOf(databases.us),
          LATAM_DATABASE_URL: urlOf(databases.latam),
          KAFKA_BROKERS: brokers,
          ORDERS_TOPIC: topics.orders,
          REFUNDS_TOPIC: topics.refunds,
          US_WAL_SLOT: slotName,
        },
        (port) => fetch(`http://127.0.0.1:${port}/orders/eu`).then((response) => response.status === 404),
      );
      const placed: Record<string, string> = {};
      for (const region of ['eu', 'us']) {
        const response = await fetch(`http://127.0.0.1:${app.port}/orders/${region}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ totalCents: 2500 }) });
        expect(response.status).toBe(201);
        placed[region] = ((await response.json()) as { id: string }).id;
      }
      const refund = await fetch(`http://127.0.0.1:${app.port}/refunds/${placed.eu}`, { method: 'POST' });
      expect(refund.status).toBe(201);

      for (const region of ['eu', 'us']) {
        const [record] = await waitFor(`the ${region} order’s event on Kafka`, () => orders.forKey(placed[region]).length > 0 && orders.forKey(placed[region]), 60_000);
        expect(record.value).toMatchObject({ type: 'orders.order-placed', aggregateId: placed[region], payload: { orderId: placed[region], region, totalCents: 2500 } });
      }
      const [refunded] = await waitFor('the latam refund’s event on Kafka', () => refunds.forKey(placed.eu).length > 0 && refunds.forKey(placed.eu), 60_000);
      expect(refunded.value).toMatchObject({ type: 'orders.order-refunded', aggregateId: placed.eu, payload: { orderId: placed.eu } });
      expect(orders.records).toHaveLength(2);
      expect(refunds.records).toHaveLength(1);

      // Each event was written in its own region's database, and only there.
      const outboxOf = (region: (typeof REGIONS)[number]) => rows(urlOf(databases[region]), 'SELECT aggregate_id, destination, status FROM outbox_messages ORDER BY position');
      expect(await waitFor('the eu row marked published', async () => ((await outboxOf('eu'))[0]?.status === 'published' ? outboxOf('eu') : undefined))).toEqual([
        { aggregate_id: placed.eu, destination: topics.orders, status: 'published' },
      ]);
      expect(await waitFor('the latam row marked published', async () => ((await outboxOf('latam'))[0]?.status === 'published' ? outboxOf('latam') : undefined))).toEqual([
        { aggregate_id: placed.eu, destination: topics.refunds, status: 'published' },
      ]);
      // The WAL mode's row (wal.write 'row') goes once the broker acknowledged it: its table ends empty.
      expect(await waitFor('the us table emptied by its stream', async () => ((await outboxOf('us')).length === 0 ? 'empty' : undefined))).toBe('empty');
      expect(await rows(urlOf(databases.latam), 'SELECT order_id FROM refunds')).toEqual([{ order_id: placed.eu }]);

      const log = app.log();
      for (const region of ['eu', 'latam']) expect(log).toMatch(new RegExp(`Relay \\S+ of outbox "${region}" publishing "outbox_messages" through`));
      expect(log).toContain(`WAL relay of outbox "us" streaming slot "${slotName}"`);
    } finally {
      await app?.stop();
      app = undefined;
      await orders.stop();
      await refunds.stop();
    }
  }, 300_000);
});

/** `@scope/name@1.2.3` or `name@1.2.3` → the name; a path to the packed library → its package's name. */
function packageName(spec: string): string {
  if (spec.endsWith('.tgz')) return '@nest-outbox/outbox';
  const at = spec.lastIndexOf('@');
  return at > 0 ? spec.slice(0, at) : spec;
}
