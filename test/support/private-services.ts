import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './example-app';
import { requireService, serviceEnv } from './services';
import { waitFor } from './wait-for';

const run = promisify(execFile);

export interface PrivateService {
  /** postgres://… for PostgreSQL, host:port for Kafka. */
  readonly address: string;
  /** Takes the service away (an outage): the next connection is refused. */
  stop(): Promise<void>;
  /** Stops it if it runs and removes what it wrote. */
  remove(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own (initdb into a temp dir, as scripts/services/postgres.sh
 * does, on a free port, fsync off): a test can stop it without taking the shared one from the tests
 * running beside it. About a second.
 */
export async function privatePostgres(): Promise<PrivateService> {
  const bin = pgBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'outbox-pg-'));
  chmodSync(dir, 0o777); // initdb refuses root: the server runs as postgres and writes here
  const asPostgres = (file: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, file), ...args], { cwd: '/' });
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', data, '--no-sync', '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  await asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '30', '-o', options, 'start']);
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']).catch(() => undefined);
  };
  return {
    address: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Kafka test broker of the test's own: the mock that `scripts/services.sh up kafka` compiled, in its own process. */
export async function privateKafka(): Promise<PrivateService> {
  requireService('kafka'); // the shared one's `up` is what compiles the binary
  const binary = join(serviceEnv().OUTBOX_SERVICES_DIR ?? join(__dirname, '..', '..', '.services'), 'bin', 'kafka-mock');
  if (!existsSync(binary)) throw new Error(`No Kafka mock at ${binary}: run "bash scripts/services.sh up kafka" first.`);
  const dir = mkdtempSync(join(tmpdir(), 'outbox-kafka-'));
  const bootstrap = join(dir, 'bootstrap');
  const child = spawn(binary, [bootstrap, join(dir, 'pid'), '1'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const address = await waitFor('the private Kafka mock to write its bootstrap address', () => existsSync(bootstrap) && readFileSync(bootstrap, 'utf8').trim(), 10_000);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  return {
    address,
    // An outage as `scripts/services.sh kafka-down` makes one: connections closed, new ones refused on the same port.
    stop: async () => void child.kill('SIGUSR1'),
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgBinDir(): string {
  if (existsSync('/usr/lib/postgresql/15/bin/pg_ctl')) return '/usr/lib/postgresql/15/bin';
  throw new Error('No PostgreSQL server binaries in /usr/lib/postgresql/15/bin: run "bash scripts/services.sh up postgres" (it installs them).');
}
