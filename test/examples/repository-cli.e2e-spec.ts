import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { validateAsyncApi } from '../asyncapi/asyncapi-support';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/**
 * `nest-outbox` as the docs run it in a clone of this repository: `npx nest-outbox` right after
 * `npm install`, with no library built (the library's own bin points at its unbuilt dist/, so npm
 * links none, and npx would ask the registry for a package of that name), and docs/asyncapi.md's
 * command lines, run as written from the repository's root.
 */
describe('the nest-outbox command in a clone of the repository', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-repository-cli-'));
  const shell = (line: string, cwd: string, env: Record<string, string> = {}) =>
    run('bash', ['-e', '-c', line], { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: 300_000 });

  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('answers `npx --no-install nest-outbox --help` from the repository', async () => {
    const { stdout } = await shell('npx --no-install nest-outbox --help', root);
    expect(stdout).toMatch(/^Usage: nest-outbox <command> \[options\]\n/);
    expect(stdout).toContain('asyncapi');
  }, 120_000);

  it('answers it in a clone where nothing is built and npm linked no nest-outbox', async () => {
    const clone = cloneWithoutBuild(join(workDir, 'clone'));
    expect(existsSync(join(clone, 'libs/outbox/dist')) || existsSync(join(clone, 'node_modules/.bin/nest-outbox'))).toBe(false);
    const { stdout } = await shell('npx --no-install nest-outbox --help', clone);
    expect(stdout).toMatch(/^Usage: nest-outbox <command> \[options\]\n/);
    // The published package keeps its built CLI as its bin.
    expect(JSON.parse(readFileSync(join(root, 'libs/outbox/package.json'), 'utf8')).bin).toEqual({ 'nest-outbox': 'dist/cli/outbox-cli.main.js' });
  }, 120_000);

  it('runs the command lines of docs/asyncapi.md as written, and they write the demo’s document', async () => {
    const lines = commandBlock();
    expect(lines).toEqual([
      'npm run build:demo',
      expect.stringMatching(/^npx nest-outbox asyncapi --app (\S+) > asyncapi\.json$/),
      expect.stringMatching(/^npx nest-outbox asyncapi --app (\S+) --yaml --out asyncapi\.yaml$/),
    ]);
    const outputs = ['asyncapi.json', 'asyncapi.yaml'].map((file) => join(root, file));
    expect(outputs.filter((file) => existsSync(file))).toEqual([]);
    // The demo reads its database from DATABASE_URL (a file of its own here); the command connects to no broker.
    const env = { DATABASE_URL: `sqlite:${join(workDir, 'orders.sqlite')}`, ORDERS_TOPIC: 'orders' };
    try {
      for (const line of lines) await shell(line, root, env);
      const json = JSON.parse(readFileSync(outputs[0], 'utf8')) as { info: { title: string }; channels: Record<string, unknown> };
      expect(json.info.title).toBe('order-service');
      expect(Object.keys(json.channels)).toContain('orders');
      expect((await validateAsyncApi(json)).errors).toEqual([]);
      const yaml = readFileSync(outputs[1], 'utf8');
      expect(yaml).toMatch(/^"asyncapi": "3\.0\.0"$/m);
      expect((await validateAsyncApi(yaml)).errors).toEqual([]);
    } finally {
      for (const file of outputs) rmSync(file, { force: true });
    }
  }, 600_000);
});

/** The sh block under docs/asyncapi.md's "## The command", line by line. */
function commandBlock(): string[] {
  const page = readFileSync(join(root, 'docs/asyncapi.md'), 'utf8');
  const section = page.slice(page.indexOf('## The command'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/asyncapi.md has no sh block under "## The command"');
  return block[1].trim().split('\n');
}

/**
 * What a fresh clone holds after `npm install`, without a build: the repository's package.json and
 * scripts, the library's package.json and source, and the installed packages without npm's bin links
 * (each package linked from the repository's node_modules, `.bin` left out).
 */
function cloneWithoutBuild(clone: string): string {
  mkdirSync(join(clone, 'scripts'), { recursive: true });
  mkdirSync(join(clone, 'libs/outbox'), { recursive: true });
  mkdirSync(join(clone, 'node_modules'));
  copyFileSync(join(root, 'package.json'), join(clone, 'package.json'));
  copyFileSync(join(root, 'scripts/nest-outbox.cjs'), join(clone, 'scripts/nest-outbox.cjs'));
  copyFileSync(join(root, 'libs/outbox/package.json'), join(clone, 'libs/outbox/package.json'));
  symlinkSync(join(root, 'libs/outbox/src'), join(clone, 'libs/outbox/src'));
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry !== '.bin' && entry !== '.package-lock.json') symlinkSync(join(root, 'node_modules', entry), join(clone, 'node_modules', entry));
  }
  return clone;
}
