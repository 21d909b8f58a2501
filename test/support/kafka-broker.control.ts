import { serviceEnv, requireService } from './services';

/**
 * Takes the Kafka test broker offline and back (it keeps its port and its data), by signalling
 * the broker process started by scripts/services.sh.
 */
export class KafkaBrokerControl {
  private readonly pid: number;

  constructor() {
    requireService('kafka');
    const pid = Number(serviceEnv().OUTBOX_TEST_KAFKA_MOCK_PID);
    if (!Number.isInteger(pid) || pid <= 0) {
      throw new Error('OUTBOX_TEST_KAFKA_MOCK_PID is not set: start the broker with "bash scripts/services.sh up kafka".');
    }
    this.pid = pid;
  }

  stop(): void {
    process.kill(this.pid, 'SIGUSR1');
  }

  start(): void {
    process.kill(this.pid, 'SIGUSR2');
  }
}
