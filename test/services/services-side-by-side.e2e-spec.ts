import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freeRestartablePort } from '../support/free-port';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const repo = join(__dirname, '..', '..');
const servicesSh = join(repo, 'scripts', 'services.sh');

/**
 * Two clones' suites on one machine: `scripts/services.sh up` of one (B) goes through its package
 * install while the other (A) brings its PostgreSQL up. The install stops what it started itself,
 * and nothing else: A's server, which appeared during B's install, keeps running.
 * The install is a stand-in (OUTBOX_SERVICES_TEST_INSTALLER) that holds the window open and leaves
 * a daemon behind, so the test needs neither the package archive nor luck with timing.
 */
describe('scripts/services.sh side by side with another clone on the same machine', () => {
  it("a package install stops the daemons it started and leaves the other clone's PostgreSQL running", async () => {
    if (process.getuid?.() !== 0) throw new Error('scripts/services.sh installs packages and starts servers as their users: run this test as root.');
    const [portA, portB] = await distinctPorts();
    // Under /tmp and world-readable: the servers run as the postgres user, which must reach their data.
    const dirA = tempDir('outbox-side-a-');
    const dirB = tempDir('outbox-side-b-');
    const installer = tempDir('outbox-side-install-');
    const clone = (dir: string, port: number, extra: Record<string, string> = {}) => ({ ...cleanEnv(), OUTBOX_SERVICES_DIR: dir, OUTBOX_POSTGRES_PORT: String(port), ...extra });
    try {
      const upB = runScript(['up', 'postgres'], clone(dirB, portB, {
        OUTBOX_SERVICES_TEST_INSTALLER: `bash ${join(__dirname, 'fake-package-install.sh')}`,
        FAKE_INSTALL_DIR: installer,
      }));
      await waitFor("B's package install to begin", () => existsSync(join(installer, 'window-open')) || upB.exited(), 60_000);
      if (!existsSync(join(installer, 'window-open'))) throw new Error(`services.sh up in B ended before its package install:\n${(await upB.result).stderr}`);
      const leftBehind = Number(readFileSync(join(installer, 'daemon.pid'), 'utf8'));

      await run('bash', [servicesSh, 'up', 'postgres'], { env: clone(dirA, portA), timeout: 120_000 });
      writeFileSync(join(installer, 'release'), '');
      const b = await upB.result;

      expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('stopping nats-server') });
      expect(alive(leftBehind)).toBe(false);
      expect(await selectOne(portA)).toBe(1);
      expect(await selectOne(portB)).toBe(1);
    } finally {
      await run('bash', [servicesSh, 'down'], { env: clone(dirA, portA) }).catch(() => undefined);
      await run('bash', [servicesSh, 'down'], { env: clone(dirB, portB) }).catch(() => undefined);
      const pidFile = join(installer, 'daemon.pid');
      if (existsSync(pidFile)) killQuietly(Number(readFileSync(pidFile, 'utf8')));
      for (const dir of [dirA, dirB, installer]) rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

async function distinctPorts(): Promise<[number, number]> {
  const first = await freeRestartablePort();
  const second = await waitFor('a second free port', async () => {
    const port = await freeRestartablePort();
    return port !== first && port;
  });
  return [first, second];
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join('/tmp', prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/** This process's environment without the suite's own service settings, which name the first clone's ports and dir. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OUTBOX_')));
}

function runScript(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn('bash', [servicesSh, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let done = false;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once('close', (code) => {
      done = true;
      resolve({ code, stderr });
    }),
  );
  return { result, exited: () => done };
}

async function selectOne(port: number): Promise<number> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'outbox_test' });
  await client.connect();
  try {
    const { rows } = await client.query<{ one: number }>('select 1 as one');
    return rows[0].one;
  } finally {
    await client.end();
  }
}

/** The process exists and has not exited (a zombie waiting for its parent counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Kills the installer's left-behind daemon if the test failed before services.sh did, and only it (its pid may be reused). */
function killQuietly(pid: number): void {
  try {
    if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('nats-server')) return;
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
