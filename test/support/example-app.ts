import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait-for';
import { freePort } from './free-port';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** `npm pack` in libs/outbox (which builds the library first); returns the tarball's path in `destination`. */
export async function packLibrary(destination: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], { cwd: join(root, 'libs/outbox'), maxBuffer: 64 << 20 });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
  return join(destination, packed.filename);
}

/**
 * An app of examples/ as a reader ends up with it: copied to `appDir` (outside the repository, so
 * nothing resolves from the repository's node_modules), its dependency on the library pointed at
 * `tarball` (the one change to the copy), every other package installed from its own package.json
 * (the npm cache first), then built with its own `npm run build`.
 */
export async function installExample(example: string, appDir: string, tarball: string, buildEnv: Record<string, string> = {}): Promise<void> {
  cpSync(example, appDir, { recursive: true, filter: (path) => !/\/(node_modules|dist|generated)$|\.sqlite$|\.tsbuildinfo$/.test(path) });
  const manifestPath = join(appDir, 'package.json');
  const manifest = readManifest(appDir);
  manifest.dependencies['@nest-outbox/outbox'] = `file:${tarball}`;
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  // better-sqlite3 compiles from source when its prebuilt binary cannot be downloaded: both its files at once.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: appDir, maxBuffer: 64 << 20, env: { ...process.env, JOBS: 'max' } });
  await run('npm', ['run', 'build'], { cwd: appDir, maxBuffer: 64 << 20, env: { ...process.env, ...buildEnv } });
}

export function readManifest(dir: string): { dependencies: Record<string, string>; devDependencies: Record<string, string> } {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
}

export interface RunningApp {
  readonly port: number;
  log(): string;
  stop(): Promise<void>;
}

/**
 * `npm run start:prod` in `cwd` (or `shellLine`, run by bash there, as a reader types it) with PORT
 * set to a free port; resolves once `listening(port)` says the app answers, and fails with the app's
 * output if it exits or does not answer in time.
 */
export async function startExampleApp(
  cwd: string,
  env: Record<string, string>,
  listening: (port: number) => Promise<boolean>,
  shellLine?: string,
): Promise<RunningApp> {
  const port = await freePort();
  const [command, args] = shellLine ? ['bash', ['-c', shellLine]] : ['npm', ['run', 'start:prod']];
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: stop() ends npm and the node it started together
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close': npm has exited and so has every process holding its output, the app's node among them.
  let closed = false;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve(void (closed = true))));
  const app: RunningApp = {
    port,
    log: () => output,
    stop: async () => {
      if (closed) return;
      // enableShutdownHooks: Nest closes the app (the relay drains first) and exits on SIGTERM.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // The group is gone already; 'close' is on its way.
      }
      await exited;
    },
  };
  const outcome = await waitFor(
    `the app in ${cwd} to listen`,
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) return 'exited';
      return listening(port).then((answered) => answered && 'listening', () => false);
    },
    60_000,
  ).catch((error: Error) => error.message);
  if (outcome !== 'listening') {
    await app.stop();
    throw new Error(`The app in ${cwd} did not start (${outcome}); its output:\n${output}`);
  }
  return app;
}

