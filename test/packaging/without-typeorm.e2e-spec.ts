import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postgresAdmin, postgresRows } from '../support/databases';
import { installExample, packLibrary } from '../support/example-app';
import { requireService } from '../support/services';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** The declaration stand-ins that docs/data-layers.md gives an app compiled with `skipLibCheck: false`. */
function typeOrmStandIns(): string {
  const block = /```ts\n(\/\/ typeorm\.d\.ts[\s\S]*?)```/.exec(readFileSync(join(root, 'docs/data-layers.md'), 'utf8'));
  if (!block) throw new Error('docs/data-layers.md has no ```ts block starting with "// typeorm.d.ts"');
  return block[1];
}

/** tsc's exit and output for the app's tsconfig with `overrides`; `extra` files are written into the app first. */
async function compile(appDir: string, name: string, extra: Record<string, string>, overrides: Record<string, unknown> = {}): Promise<{ ok: boolean; output: string }> {
  for (const [file, source] of Object.entries(extra)) writeFileSync(join(appDir, file), source);
  const config = { extends: './tsconfig.json', compilerOptions: { noEmit: true, incremental: false, ...overrides }, include: ['src/**/*.ts', ...Object.keys(extra)] };
  writeFileSync(join(appDir, `tsconfig.${name}.json`), JSON.stringify(config));
  try {
    await run('npx', ['--no-install', 'tsc', '-p', `tsconfig.${name}.json`], { cwd: appDir, maxBuffer: 16 << 20 });
    return { ok: true, output: '' };
  } catch (error) {
    return { ok: false, output: (error as { stdout?: string }).stdout ?? String(error) };
  }
}

/**
 * A Nest app without TypeORM as a new user has it: test/packaging/app-without-typeorm copied out
 * of the repository, the packed tarball and the app's own dependencies installed by npm with its
 * peer resolution on (it installs a package's required peers itself), built with Nest's default
 * tsconfig, run on a PostgreSQL database of its own through `OutboxModule.forRoot({ connection })`.
 */
describe('the packed library in an app without TypeORM', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-without-typeorm-'));
  const appDir = join(workDir, 'app');

  beforeAll(async () => {
    const tarball = await packLibrary(workDir);
    await installExample(join(__dirname, 'app-without-typeorm'), appDir, tarball);
  }, 600_000);

  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('is installed without typeorm and @nestjs/typeorm, while npm does install the required peers', () => {
    expect(existsSync(join(appDir, 'node_modules/@nest-outbox/outbox/dist/index.js'))).toBe(true);
    // @nestjs/microservices is in no package.json of the app: npm put it there as a required peer of the library.
    expect(existsSync(join(appDir, 'node_modules/@nestjs/microservices/package.json'))).toBe(true);
    expect(['typeorm', '@nestjs/typeorm'].filter((name) => existsSync(join(appDir, 'node_modules', name)))).toEqual([]);
    const resolvable = ['typeorm', '@nestjs/typeorm'].filter((name) => {
      try {
        return Boolean(require.resolve(name, { paths: [appDir] }));
      } catch {
        return false;
      }
    });
    expect(resolvable).toEqual([]);
  });

  it('compiles with Nest’s default tsconfig (skipLibCheck), and still type-checks the messages', async () => {
    expect(existsSync(join(appDir, 'dist/src/main.js'))).toBe(true); // the app's own `npm run build`
    const wrong = `import { OutboxPublisher } from '@nest-outbox/outbox';\nexport const add = (outbox: OutboxPublisher, tx: object) => outbox.add(tx, { type: 42, aggregateType: 'a', aggregateId: 'b', payload: {} });\n`;
    const { ok, output } = await compile(appDir, 'wrong-message', { 'wrong-message.ts': wrong });
    expect(ok).toBe(false);
    expect(output).toMatch(/wrong-message\.ts\(2,\d+\): error TS2769: No overload matches this call/);
    expect(output).toMatch(/Type 'number' is not assignable to type 'string'/);
  }, 120_000);

  it('compiles with skipLibCheck off given the stand-ins of docs/data-layers.md, which also refuse a non-transaction', async () => {
    const without = await compile(appDir, 'strict-bare', {}, { skipLibCheck: false });
    expect(without.ok).toBe(false);
    expect(without.output).toMatch(/error TS2307: Cannot find module 'typeorm'/);

    const standIns = typeOrmStandIns();
    // Every entry point the stand-ins are for, besides the app's own imports of the root.
    const entries = ['', '/core', '/testing', '/console', '/migrations'].map((subpath, i) => `export * as entry${i} from '@nest-outbox/outbox${subpath}';\n`).join('');
    const strict = await compile(appDir, 'strict', { 'typeorm.d.ts': standIns, 'entries.ts': entries }, { skipLibCheck: false });
    expect(strict.output).toBe('');
    expect(strict.ok).toBe(true);

    const wrong = `import { OutboxPublisher } from '@nest-outbox/outbox';\nexport const add = (outbox: OutboxPublisher) => outbox.add(42, { type: 'a', aggregateType: 'a', aggregateId: 'b', payload: {} });\n`;
    const refused = await compile(appDir, 'strict-wrong', { 'typeorm.d.ts': standIns, 'wrong-transaction.ts': wrong }, { skipLibCheck: false });
    expect(refused.ok).toBe(false);
    expect(refused.output).toMatch(/wrong-transaction\.ts\(2,\d+\): error TS2769: No overload matches this call/);
  }, 240_000);

  it('commits an event in a node-postgres transaction and the relay publishes it; the rolled-back one never exists', async () => {
    const server = requireService('postgres');
    const database = `without_typeorm_${randomBytes(4).toString('hex')}`;
    const url = new URL(server);
    url.pathname = `/${database}`;
    const databaseUrl = url.toString();
    await postgresAdmin(server, `CREATE DATABASE ${database}`);
    try {
      // The tables from the packed CLI, which needs no TypeORM either.
      const { stdout: ddl } = await run('npx', ['--no-install', 'nest-outbox', 'sql', '--dialect', 'postgres'], { cwd: appDir });
      expect(ddl).toMatch(/CREATE TABLE/);
      await postgresRows(databaseUrl, `${ddl}\nCREATE TABLE greetings (name text PRIMARY KEY);`);

      const { stdout } = await run('node', ['dist/src/main.js'], { cwd: appDir, env: { ...process.env, DATABASE_URL: databaseUrl } });
      const result = JSON.parse(stdout.trim().split('\n').pop()!) as { received: Array<Record<string, unknown>>; rows: unknown[]; loaded: string[] };
      expect(result.received).toEqual([expect.objectContaining({ type: 'greetings.greeted', aggregateType: 'greeting', aggregateId: 'committed', payload: { name: 'committed' } })]);
      expect(result.rows).toEqual([{ aggregate_id: 'committed', destination: 'greetings.log', status: 'published' }]);
      expect(result.loaded).toEqual([]);
      expect(await postgresRows(databaseUrl, 'SELECT name FROM greetings')).toEqual([{ name: 'committed' }]);

      const { stdout: status } = await run('npx', ['--no-install', 'nest-outbox', 'status', '--json', '--url', databaseUrl], { cwd: appDir });
      expect(JSON.parse(status)).toMatchObject({ pending: 0, dead: 0, publishedLastHour: 1, ok: true });
    } finally {
      await postgresAdmin(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  }, 120_000);

  it('fails at bootstrap when a module is declared without connection, naming typeorm, @nestjs/typeorm and the connection option', async () => {
    const failure = await run('node', ['dist/src/typeorm-mode.js'], { cwd: appDir }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain(
      'OutboxModule without the "connection" option runs on a TypeORM data source, and "typeorm" and "@nestjs/typeorm" are not installed. ' +
        'Run "npm install typeorm @nestjs/typeorm", or pass the "connection" option ({ url } or { pool }) to run without TypeORM',
    );
    expect(failure?.stderr).toContain('OutboxConfigurationError');
  }, 60_000);
});
