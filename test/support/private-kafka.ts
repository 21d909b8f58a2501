import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireService, serviceEnv } from './services';
import { waitFor } from './wait-for';

export interface PrivateKafka {
  /** host:port of its one broker. */
  readonly address: string;
  /** Takes the broker away (an outage): connections are closed and new ones refused; the process stays. */
  stop(): Promise<void>;
  /** Brings the broker back after stop(), on the same port and with the records it had. */
  start(): Promise<void>;
  /** Stops it if it runs and removes what it wrote. */
  remove(): Promise<void>;
}

/** A Kafka test broker of the test's own: the mock that `scripts/services.sh up kafka` compiled, in its own process. */
export async function privateKafka(): Promise<PrivateKafka> {
  requireService('kafka'); // the shared one's `up` is what compiles the binary
  const env = serviceEnv();
  // The shared broker's own executable (its librdkafka sits beside it), else the system build's place.
  const binary = env.OUTBOX_TEST_KAFKA_MOCK_BIN ?? join(env.OUTBOX_SERVICES_DIR ?? join(__dirname, '..', '..', '.services'), 'bin', 'kafka-mock');
  if (!existsSync(binary)) throw new Error(`No Kafka mock at ${binary}: run "bash scripts/services.sh up kafka" first.`);
  const dir = mkdtempSync(join(tmpdir(), 'outbox-kafka-'));
  const bootstrap = join(dir, 'bootstrap');
  const child = spawn(binary, [bootstrap, join(dir, 'pid'), '1'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const address = await waitFor('the private Kafka mock to write its bootstrap address', () => existsSync(bootstrap) && readFileSync(bootstrap, 'utf8').trim(), 10_000);
  const end = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  return {
    address,
    // An outage as `scripts/services.sh kafka-down` makes one: connections closed, new ones refused on the same port.
    stop: async () => void child.kill('SIGUSR1'),
    // Its log is not kept (stdio ignored), so nothing says when it is up: clients retry until it is.
    start: async () => void child.kill('SIGUSR2'),
    remove: async () => {
      await end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
