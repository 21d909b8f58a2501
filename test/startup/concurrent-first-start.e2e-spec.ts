import { join } from 'node:path';
import type { Client } from 'pg';
import { dropWalSlot } from '../../libs/outbox/src/wal/wal-slot.setup';
import { freePorts } from '../support/free-port';
import { waitFor } from '../support/wait-for';
import { forkInstance, freshMariaDbDatabase, freshPostgresDatabase, freshSqliteDatabase, releaseTogether, waitUntilAllReady, type FreshDatabase, type Instance } from './first-start.harness';

/**
 * Rolling deployments and autoscalers start instances together: 4 app processes, spawned at once on
 * an empty database, must all start, leave one set of tables with each migration recorded once, and
 * publish. Each case gets a database of its own (CREATE DATABASE, or a SQLite file). The children
 * are held at their first DataSource.initialize() until all are there (start-together.cjs): their
 * TypeScript is transpiled as they load, which spread their arrivals up to 4 s apart here, wider than
 * the migrations take.
 *
 * Without the lock: the WAL app's instances exit on `duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"`; the demo's fail their first start alike and survive only because
 * TypeOrmModule retries (3 s later), which the check of their ERROR lines catches.
 */
const INSTANCES = 4;
const START_DEADLINE_MS = 60_000;
const DEMO_MAIN = join(__dirname, '..', '..', 'apps', 'order-service', 'src', 'main.ts');

const DEMO_MIGRATIONS = [
  'CreateInboxPoisonTableoutboxinboxpoison1767398400000',
  'CreateInboxTableoutboxinbox1767312000000',
  'CreateOrderTables1767225600001',
  'CreateOrderTimeline1767225600002',
  'CreateOutboxTableoutboxmessages1767225600000',
];
const DEMO_TABLES = ['migrations', 'order_lines', 'order_timeline', 'orders', 'outbox_inbox', 'outbox_inbox_poison', 'outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads'];

/** FIRST_START_PRINT=1: how far apart the instances reached their start line, and how many waited for the migration lock. */
const report = (spreadMs: number, instances: Instance[]) => {
  if (!process.env.FIRST_START_PRINT) return;
  const waited = instances.filter((instance) => instance.output().includes('for the migration lock')).length;
  process.stderr.write(`${expect.getState().currentTestName}: arrived ${spreadMs} ms apart at the start line; ${waited} of ${instances.length} waited for the migration lock\n`);
};

/** The lines an instance logged at level ERROR (Nest's logger), with what follows on the same line. */
const errorLines = (output: string) => output.split('\n').filter((line) => /\bERROR\b/.test(line)).map((line) => line.slice(0, 300));

describe(`${INSTANCES} instances started at once on an empty database`, () => {
  let database: FreshDatabase | undefined;
  let instances: Instance[] = [];

  afterEach(async () => {
    await Promise.all(instances.map((instance) => instance.kill()));
    instances = [];
    await database?.drop();
    database = undefined;
  });

  /** The demo as main.ts starts it (TCP: each instance's relay publishes to its own consumer). */
  const startDemos = async (url: string): Promise<Array<{ instance: Instance; port: number }>> => {
    const ports = await freePorts(2 * INSTANCES);
    const settings = Array.from({ length: INSTANCES }, (_, i) => ({ port: ports[2 * i], tcpPort: ports[2 * i + 1] }));
    const started = settings.map(({ port, tcpPort }) => ({
      port,
      instance: forkInstance(DEMO_MAIN, { DATABASE_URL: url, PORT: String(port), TCP_PORT: String(tcpPort), ORDERS_TOPIC: 'orders', OUTBOX_POLL_INTERVAL_MS: '200' }),
    }));
    instances = started.map(({ instance }) => instance);
    const spread = await releaseTogether(instances, START_DEADLINE_MS);
    await waitUntilAllReady(instances, async (_, index) => (await fetch(`http://127.0.0.1:${started[index].port}/health`)).status === 200, START_DEADLINE_MS);
    report(spread, instances);
    return started;
  };

  const expectOrderPublished = async (port: number) => {
    const placed = await fetch(`http://127.0.0.1:${port}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'first-start', items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 99 }] }),
    });
    expect(placed.status).toBe(201);
    const { id } = (await placed.json()) as { id: string };
    // The consumer writes the timeline entry when the relay has published the event to it.
    await waitFor(`the order-placed event of ${id} published and consumed`, async () => {
      const timeline = (await (await fetch(`http://127.0.0.1:${port}/received-events/timeline?orderId=${id}`)).json()) as unknown[];
      return timeline.length > 0;
    });
  };

  const demoCases: Array<[string, (prefix: string) => Promise<FreshDatabase>, string[]]> = [
    ['PostgreSQL', freshPostgresDatabase, DEMO_TABLES],
    ['MariaDB', freshMariaDbDatabase, [...DEMO_TABLES, 'outbox_messages_locks'].sort()],
    ['SQLite (a file)', freshSqliteDatabase, DEMO_TABLES],
  ];

  it.each(demoCases)(
    'the demo on %s (table mode): all start, one set of tables, each migration once, an event published',
    async (_, fresh, tables) => {
      database = await fresh('first_start');
      const demos = await startDemos(database.url);

      // Nest's TypeOrmModule retries a failed DataSource start (3 s apart, 9 times): a migration that
      // failed on a table another instance created shows here, not as an exit.
      expect(instances.map((instance) => errorLines(instance.output()))).toEqual(instances.map(() => []));
      expect(await database.tables()).toEqual(tables);
      expect(await database.migrations()).toEqual(DEMO_MIGRATIONS.map((name) => ({ name, times: 1 })));
      await expectOrderPublished(demos[INSTANCES - 1].port);
    },
    START_DEADLINE_MS + 30_000,
  );

  it(
    "a WAL-mode app on PostgreSQL (delivery: 'wal'): all start, one set of tables, the migration once, an event published",
    async () => {
      const slotName = `first_start_${Date.now().toString(36)}`;
      database = await freshPostgresDatabase('first_start_wal', async (client: Client) => {
        // A slot holds its database: drop it (once no instance streams it) before the database.
        await waitFor('the slot to be released', async () => (await client.query(`SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active`, [slotName])).rowCount === 0);
        await dropWalSlot(async (sql, params) => (await client.query(sql, params)).rows, { slotName, publicationName: slotName });
      });
      const url = database.url;
      instances = Array.from({ length: INSTANCES }, () => forkInstance(join(__dirname, 'wal-app.child.ts'), { STARTUP_CHILD: JSON.stringify({ url, slotName }) }));
      const spread = await releaseTogether(instances, START_DEADLINE_MS);
      await waitUntilAllReady(instances, async (instance) => instance.said('ready'), START_DEADLINE_MS);
      report(spread, instances);

      expect(instances.map((instance) => errorLines(instance.output()))).toEqual(instances.map(() => []));
      // The migration's tables, and the two the WAL set-up makes beside them (under its own lock).
      expect(await database.tables()).toEqual(['migrations', 'outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads', 'outbox_messages_wal_positions', 'outbox_messages_wal_published']);
      expect(await database.migrations()).toEqual([{ name: 'CreateOutboxTableoutboxmessages1767225600000', times: 1 }]);
      const writer = instances[INSTANCES - 1];
      const written = new Promise<string>((resolve) => writer.child.on('message', (message: { t: string; id: string }) => message.t === 'written' && resolve(message.id)));
      writer.child.send({ t: 'write', key: 'first-start' });
      const id = await written;
      await waitFor(`event ${id} published by the instance that streams the slot`, () => instances.some((instance) => instance.published.includes(id)));
    },
    START_DEADLINE_MS + 30_000,
  );
});
