import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const library = join(root, 'libs/outbox');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

interface Manifest {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

/** The peers an application must install; the optional ones are what the root must not need. */
const manifest = JSON.parse(readFileSync(join(library, 'package.json'), 'utf8')) as Manifest;
const optionalPeers = Object.keys(manifest.peerDependencies).filter((name) => manifest.peerDependenciesMeta[name]?.optional);
const requiredPeers = Object.keys(manifest.peerDependencies).filter((name) => !optionalPeers.includes(name));
/** The subpath that names optional peers in its types, and the peers it names. */
const observabilityPeers = ['prom-client', '@nestjs/terminus', '@opentelemetry/api'];
/** What a TypeORM app adds: the types of the root and the subpaths name TypeORM's (an app without it: without-typeorm.e2e-spec.ts). */
const typeOrmPeers = ['typeorm', '@nestjs/typeorm'];

/**
 * The package's declarations as a user's compiler meets them: `skipLibCheck: false`, in a project
 * outside the repository (nothing resolves from its node_modules) holding the tarball and only the
 * required peers (linked from the repository's node_modules, at the versions the suite runs). Every
 * entry point loads at run time without any optional peer, TypeORM included. With TypeORM's two
 * packages added (a TypeORM app) the root and every subpath but /observability compile so;
 * /observability compiles once the peers its types name are there.
 */
describe('the packed declarations', () => {
  const app = mkdtempSync(join(tmpdir(), 'outbox-declarations-'));

  afterAll(() => rmSync(app, { recursive: true, force: true }));

  const link = (name: string) => {
    if (existsSync(join(app, 'node_modules', name))) return;
    mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(app, 'node_modules', name), 'dir');
  };

  /** Compiles `source` with the strict settings of a fresh Nest 12 app and no skipLibCheck; resolves to tsc's output. */
  const compile = async (file: string, source: string, options: Record<string, unknown> = {}): Promise<{ ok: boolean; output: string }> => {
    writeFileSync(join(app, file), source);
    const config = {
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', lib: ['es2023'], types: ['node'], strict: true, skipLibCheck: false, noEmit: true, experimentalDecorators: true, ...options },
      files: [file],
    };
    writeFileSync(join(app, `tsconfig.${file}.json`), JSON.stringify(config));
    try {
      const { stdout } = await run('node', [tsc, '-p', `tsconfig.${file}.json`], { cwd: app, maxBuffer: 16 << 20 });
      return { ok: true, output: stdout };
    } catch (error) {
      return { ok: false, output: (error as { stdout?: string }).stdout ?? String(error) };
    }
  };

  const importAll = (entries: string[]) =>
    entries.map((entry, i) => `import * as entry${i} from '${entry}';\nexport const names${i}: string[] = Object.keys(entry${i});\n`).join('');

  beforeAll(async () => {
    writeFileSync(join(app, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', app], { cwd: library, maxBuffer: 64 << 20 });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
    // uuid, the one dependency, comes from the npm cache when it has it; peers are not installed (the user's choice).
    await run('npm', ['install', '--no-save', '--prefer-offline', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', join(app, packed.filename)], { cwd: app });
    for (const name of [...requiredPeers, '@types/node']) link(name);
  }, 240_000);

  it('has only the required peers within reach', () => {
    expect(requiredPeers).toEqual(expect.arrayContaining(['@nestjs/common', '@nestjs/core']));
    expect(optionalPeers).toEqual(expect.arrayContaining([...observabilityPeers, ...typeOrmPeers, 'class-validator', 'pg-logical-replication']));
    const reachable = optionalPeers.filter((name) => {
      try {
        require.resolve(name, { paths: [app] });
        return true;
      } catch {
        return false;
      }
    });
    expect(reachable).toEqual([]);
  });

  it('carries repository metadata and a README whose links work on npm (absolute URLs)', () => {
    const installed = join(app, 'node_modules/@nest-outbox/outbox');
    const meta = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(meta).toMatchObject({ repository: { url: expect.stringMatching(/^git\+https:\/\//) }, homepage: expect.stringMatching(/^https:\/\//), bugs: { url: expect.stringMatching(/^https:\/\//) } });
    expect(meta.keywords).toEqual(expect.arrayContaining(['nestjs', 'outbox', 'typeorm']));
    const links = [...readFileSync(join(installed, 'README.md'), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((link) => !/^https:\/\//.test(link))).toEqual([]);
  });

  it('loads every entry point at run time without the optional peers', async () => {
    const entries = ['', '/core', '/typeorm', '/testing', '/console', '/migrations', '/observability', '/kafka', '/asyncapi', '/tenants'].map((subpath) => `@nest-outbox/outbox${subpath}`);
    const script = `import 'reflect-metadata';\nconst counts = {};\nfor (const entry of ${JSON.stringify(entries)}) counts[entry] = Object.keys(await import(entry)).length;\nconsole.log(JSON.stringify(counts));\n`;
    writeFileSync(join(app, 'load.mjs'), script);
    const { stdout } = await run('node', ['load.mjs'], { cwd: app });
    const counts = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>;
    expect(Object.keys(counts)).toEqual(entries);
    expect(Object.values(counts).filter((count) => count === 0)).toEqual([]);
  }, 60_000);

  it('loads /core without Nest or TypeORM (plain TypeScript, for relays and stores of your own)', async () => {
    const script = `require('@nest-outbox/outbox/core');\nconsole.log(JSON.stringify(Object.keys(require.cache)));\n`;
    writeFileSync(join(app, 'load-core.cjs'), script);
    const { stdout } = await run('node', ['load-core.cjs'], { cwd: app });
    const loaded = JSON.parse(stdout.trim().split('\n').pop()!) as string[];
    expect(loaded.some((file) => file.includes('/@nest-outbox/outbox/dist/core/'))).toBe(true);
    expect(loaded.filter((file) => /node_modules\/(@nestjs|typeorm)\//.test(file))).toEqual([]);
  }, 60_000);

  it('compiles the root, /core, /typeorm, /testing, /console, /migrations, /kafka, /asyncapi and /tenants with TypeORM and without the other optional peers', async () => {
    for (const name of typeOrmPeers) link(name);
    const entries = ['@nest-outbox/outbox', ...['core', 'typeorm', 'testing', 'console', 'migrations', 'kafka', 'asyncapi', 'tenants'].map((subpath) => `@nest-outbox/outbox/${subpath}`)];
    const { ok, output } = await compile('required-peers.ts', importAll(entries));
    expect(output).toBe('');
    expect(ok).toBe(true);
  }, 120_000);

  it('resolves the subpaths under the older moduleResolution "node10" too (a CommonJS Nest 11 app), through typesVersions', async () => {
    for (const name of typeOrmPeers) link(name);
    const entries = ['@nest-outbox/outbox', ...['core', 'typeorm', 'testing', 'console', 'migrations', 'kafka', 'asyncapi', 'tenants'].map((subpath) => `@nest-outbox/outbox/${subpath}`)];
    const { ok, output } = await compile('node10.ts', importAll(entries), { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' });
    expect(output).toBe('');
    expect(ok).toBe(true);
  }, 120_000);

  it('compiles /observability once the peers its types name are installed, and not before', async () => {
    for (const name of typeOrmPeers) link(name);
    const source = importAll(['@nest-outbox/outbox/observability']);
    const without = await compile('observability-without.ts', source);
    expect(without.ok).toBe(false);
    expect(without.output).toMatch(/Cannot find module '(prom-client|@nestjs\/terminus)'/);

    for (const name of observabilityPeers) link(name);
    const { ok, output } = await compile('observability.ts', source);
    expect(output).toBe('');
    expect(ok).toBe(true);
  }, 120_000);
});
