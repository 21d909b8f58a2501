import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { postgresRows as rows } from '../support/databases';
import { packLibrary, readManifest, startExampleApp, type RunningApp } from '../support/example-app';
import { freePorts } from '../support/free-port';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const pagePath = join(root, 'docs/prisma.md');

/** What `nest new` leaves once the tutorial's step 1 has removed the hello-world files: examples/tutorial is that app. */
const NEST_NEW_FILES = ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];
const NEST_NEW_PACKAGES = ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', 'reflect-metadata', 'rxjs', '@nestjs/cli', '@types/express', '@types/node', 'typescript'];

/**
 * docs/prisma.md as a newcomer follows it, with nothing from examples/prisma: a Nest 12 app as
 * `nest new` makes it, the files of the page's blocks written where their first line says, and the
 * page's commands run as written, in its order, from `shop` beside a `nest-outbox` that holds the
 * packed library. Where the page gives an online and an offline command, the offline one runs (CI
 * cannot download Prisma's engines). PostgreSQL and Kafka come from the tutorial's step 10 line (the
 * repository's script) on free ports, through the POSTGRES_PORT and KAFKA_PORT the pages document.
 */
describe('an app built from docs/prisma.md alone', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-prisma-page-'));
  const appDir = join(workDir, 'shop');
  const env = readerEnv();
  const shell = (line: string) => run('bash', ['-e', '-c', line], { cwd: appDir, env, maxBuffer: 64 << 20 });
  let page: { files: PageFile[]; commands: PageCommands };
  let servicesStarted = false;
  let app: RunningApp | undefined;

  beforeAll(async () => {
    page = readPage();
    const [postgresPort, kafkaPort] = await freePorts(2);
    env.POSTGRES_PORT = String(postgresPort);
    env.KAFKA_PORT = String(kafkaPort);
    const clone = join(workDir, 'nest-outbox');
    mkdirSync(join(clone, 'libs', 'outbox'), { recursive: true });
    await packLibrary(join(clone, 'libs', 'outbox'));
    symlinkSync(join(root, 'scripts'), join(clone, 'scripts'));
    scaffoldNestNew(appDir);
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: appDir, maxBuffer: 64 << 20 });
  }, 600_000);

  afterAll(async () => {
    await app?.stop();
    if (servicesStarted) {
      const services = realpathSync(join(appDir, '.services'));
      await shell('bash ../nest-outbox/scripts/services.sh down');
      if (!services.startsWith(workDir)) rmSync(services, { recursive: true, force: true });
    }
    rmSync(workDir, { recursive: true, force: true });
  }, 120_000);

  it('gives its files and commands in the order a reader follows them', () => {
    expect(page.files.map((file) => file.path)).toEqual([
      'prisma/schema.prisma',
      'prisma.config.ts',
      'src/prisma.service.ts',
      'src/settings.ts',
      'src/orders/orders.controller.ts',
      'src/app.module.ts',
      'src/main.ts',
      'prisma/migrations/20261124080000_orders/migration.sql',
      'src/apply-prisma-migrations.ts',
    ]);
    // embedme checks the others against examples/prisma; it cannot read a prisma block.
    expect(page.files[0].content).toBe(readFileSync(join(root, 'examples/prisma/prisma/schema.prisma'), 'utf8'));
  });

  it('installs without TypeORM, generates the client offline and builds', async () => {
    for (const file of page.files) {
      mkdirSync(join(appDir, dirname(file.path)), { recursive: true });
      writeFileSync(join(appDir, file.path), file.content);
    }
    await shell(page.commands.install);
    expect(['typeorm', '@nestjs/typeorm'].filter((name) => existsSync(join(appDir, 'node_modules', name)))).toEqual([]);
    await shell(page.commands.generateOffline);
    expect(existsSync(join(appDir, 'src/generated/prisma/client.ts'))).toBe(true);
    await shell(page.commands.outboxMigration);
    await shell(page.commands.build);
    expect(readFileSync(join(appDir, 'dist/main.js'), 'utf8')).toMatch(/^import .* from '\.\/app\.module\.js';$/m);
  }, 600_000);

  it('creates the tables with the recipe, which records them; the /bin/true trap creates none and says nothing', async () => {
    servicesStarted = true;
    await shell(tutorialServicesLine());
    const databaseUrl = `postgres://postgres@127.0.0.1:${env.POSTGRES_PORT}/shop`;

    const trap = await shell(`${page.commands.exportUrls}\nPRISMA_SCHEMA_ENGINE_BINARY=/bin/true npx prisma migrate deploy`);
    expect(trap.stdout + trap.stderr).toMatch(/2 migrations found in prisma\/migrations/);
    expect(await rows(databaseUrl, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).toEqual([]);
    const loud = await shell(`${page.commands.exportUrls}\nPRISMA_SCHEMA_ENGINE_BINARY=/bin/false npx prisma migrate deploy`).then(
      () => 'exit 0',
      (error: { code: number; stderr: string }) => `exit ${error.code}: ${error.stderr}`,
    );
    expect(loud).toMatch(/^exit 1: [\s\S]*Schema engine exited/);

    const first = await shell(`${page.commands.exportUrls}\n${page.commands.migrateOffline}`);
    expect(first.stdout).toMatch(/^Applied 20261124080000_orders\nApplied \d{14}_outbox\n2 migration\(s\) applied, 0 applied before\.\n$/);
    const again = await shell(`${page.commands.exportUrls}\n${page.commands.migrateOffline}`);
    expect(again.stdout).toBe('0 migration(s) applied, 2 applied before.\n');

    const folders = readdirSync(join(appDir, 'prisma/migrations'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
    const sha256 = (folder: string) => createHash('sha256').update(readFileSync(join(appDir, 'prisma/migrations', folder, 'migration.sql'))).digest('hex');
    expect(await rows(databaseUrl, 'SELECT migration_name, checksum, applied_steps_count FROM _prisma_migrations ORDER BY migration_name')).toEqual(
      folders.map((folder) => ({ migration_name: folder, checksum: sha256(folder), applied_steps_count: 1 })),
    );
    expect((await rows(databaseUrl, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)).map((row) => row.tablename)).toEqual([
      '_prisma_migrations',
      'orders',
      'outbox_messages',
      'outbox_messages_paused',
      'outbox_messages_payloads',
    ]);
  }, 300_000);

  it('publishes a committed order’s event to Kafka, and keeps nothing of a rejected one', async () => {
    const databaseUrl = `postgres://postgres@127.0.0.1:${env.POSTGRES_PORT}/shop`;
    const reader = new KafkaTopicReader([`127.0.0.1:${env.KAFKA_PORT}`], 'orders');
    await reader.start();
    try {
      app = await startExampleApp(
        appDir,
        env,
        (port) => fetch(`http://127.0.0.1:${port}/orders`).then((response) => response.status === 404),
        `${page.commands.exportUrls}\n${page.commands.start}`,
      );
      const rejected = await postOrder(app, 'orders/rejected');
      expect(rejected.status).toBe(422);
      const placed = await postOrder(app, 'orders');
      expect(placed.status).toBe(201);
      const { id } = (await placed.json()) as { id: string };

      const [record] = await waitFor('the placed order’s event on Kafka', () => reader.forKey(id).length > 0 && reader.forKey(id), 60_000);
      expect(record.value).toMatchObject({ type: 'orders.order-placed', aggregateType: 'order', aggregateId: id, payload: { id, customerId: 'c-42', totalCents: 2500 } });
      expect(reader.records).toHaveLength(1);
      expect(await rows(databaseUrl, 'SELECT id::text FROM orders')).toEqual([{ id }]);
      expect(await waitFor('the outbox row marked published', async () => {
        const outbox = await rows(databaseUrl, 'SELECT aggregate_id, status FROM outbox_messages');
        return outbox.every((row) => row.status === 'published') && outbox;
      }, 30_000)).toEqual([{ aggregate_id: id, status: 'published' }]);
    } finally {
      await app?.stop();
      app = undefined;
      await reader.stop();
    }
  }, 180_000);
});

interface PageFile {
  path: string;
  content: string;
}

interface PageCommands {
  install: string;
  generateOffline: string;
  outboxMigration: string;
  build: string;
  exportUrls: string;
  migrateOffline: string;
  start: string;
}

/** The page's files (blocks whose first line names one) and its shell commands, in page order. */
function readPage(): { files: PageFile[]; commands: PageCommands } {
  const text = readFileSync(pagePath, 'utf8');
  const blocks = [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, body]) => ({ lang, body }));
  const files = blocks
    .filter((block) => block.lang !== 'sh')
    .map((block) => {
      const [header, ...rest] = block.body.split('\n');
      const path = /^(?:\/\/|--) (\S+)$/.exec(header)?.[1];
      if (!path) throw new Error(`A ${block.lang} block of docs/prisma.md does not start with its file's path: ${header}`);
      return { path, content: `${rest.join('\n').trim()}\n` };
    });
  const shells = blocks.filter((block) => block.lang === 'sh').map((block) => block.body.trim());
  expect(shells).toEqual([
    expect.stringMatching(/^npm install \.\.\/nest-outbox\/libs\/outbox\/nest-outbox-outbox-0\.1\.0\.tgz .*\nnpm install --save-dev prisma@/),
    'npx prisma generate', // online: downloads the schema engine (not run here)
    'PRISMA_SCHEMA_ENGINE_BINARY=/bin/false npx prisma generate',
    'npx nest-outbox sql --dialect postgres --format prisma --out prisma/migrations',
    'npm run build',
    expect.stringMatching(/^export DATABASE_URL=\S+ KAFKA_BROKERS=\S+$/),
    'npx prisma migrate deploy', // online: needs the schema engine (not run here)
    'node dist/apply-prisma-migrations.js',
    'npm run start:prod',
    expect.stringMatching(/^curl /), // the test posts with fetch, to its free port
  ]);
  const [install, , generateOffline, outboxMigration, build, exportUrls, , migrateOffline, start] = shells;
  return { files, commands: { install, generateOffline, outboxMigration, build, exportUrls, migrateOffline, start } };
}

/** The line of docs/tutorial.md step 10 that starts PostgreSQL and Kafka with the repository's script. */
function tutorialServicesLine(): string {
  const tutorial = readFileSync(join(root, 'docs/tutorial.md'), 'utf8');
  const line = tutorial.split('\n').find((candidate) => candidate.endsWith('bash ../nest-outbox/scripts/services.sh up postgres kafka'));
  if (!line) throw new Error('docs/tutorial.md no longer starts the services with scripts/services.sh');
  return line;
}

/** An app as `nest new` writes it, hello-world files removed (examples/tutorial is one, with more packages). */
function scaffoldNestNew(appDir: string): void {
  const tutorial = join(root, 'examples/tutorial');
  mkdirSync(join(appDir, 'src'), { recursive: true });
  for (const file of NEST_NEW_FILES) copyFileSync(join(tutorial, file), join(appDir, file));
  const manifest = readManifest(tutorial);
  const keep = (deps: Record<string, string>) => Object.fromEntries(Object.entries(deps).filter(([name]) => NEST_NEW_PACKAGES.includes(name)));
  writeFileSync(
    join(appDir, 'package.json'),
    JSON.stringify({ name: 'shop', version: '0.0.1', private: true, type: 'module', scripts: { build: 'nest build', 'start:prod': 'node dist/main' }, dependencies: keep(manifest.dependencies), devDependencies: keep(manifest.devDependencies) }, null, 2),
  );
}

/** This process's environment without the suite's own service settings (OUTBOX_*), and without Prisma's update checks. */
function readerEnv(): Record<string, string> {
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith('OUTBOX_')));
  return { ...env, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' };
}

function postOrder(app: RunningApp, path: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${app.port}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: 'c-42', totalCents: 2500 }),
  });
}
