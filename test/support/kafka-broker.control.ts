import { readFileSync } from 'node:fs';
import { requireService, serviceEnv } from './services';
import { waitFor } from './wait-for';

/**
 * Takes the Kafka test broker offline and back (it keeps its port and its data) by signalling
 * the broker process started by scripts/services.sh, and waits until the broker says it did.
 */
export class KafkaBrokerControl {
  private readonly pid: number;
  private readonly log: string;

  constructor() {
    requireService('kafka');
    const env = serviceEnv();
    this.pid = Number(env.OUTBOX_TEST_KAFKA_MOCK_PID);
    this.log = env.OUTBOX_TEST_KAFKA_MOCK_LOG ?? '';
    if (!Number.isInteger(this.pid) || this.pid <= 0 || !this.log) {
      throw new Error('The Kafka test broker did not publish its pid and log: restart it with "bash scripts/services.sh up kafka".');
    }
  }

  stop(): Promise<void> {
    return this.signal('SIGUSR1', 'DOWN');
  }

  start(): Promise<void> {
    return this.signal('SIGUSR2', 'UP');
  }

  private async signal(signal: NodeJS.Signals, state: 'UP' | 'DOWN'): Promise<void> {
    const before = this.transitions(state);
    process.kill(this.pid, signal);
    await waitFor(`the Kafka test broker to report ${state}`, () => this.transitions(state) > before, 5_000);
  }

  private transitions(state: 'UP' | 'DOWN'): number {
    return readFileSync(this.log, 'utf8').split('\n').filter((line) => line.includes(`broker(s) ${state}`)).length;
  }
}
