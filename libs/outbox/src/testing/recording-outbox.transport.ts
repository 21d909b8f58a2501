import type { OutgoingMessage } from '../core/outbox-message';
import type { OutboxTransport } from '../core/outbox-transport.port';

/** A transport for users' tests: keeps what it was given, and refuses on request. */
export class RecordingOutboxTransport implements OutboxTransport {
  readonly name = 'recording';
  readonly published: OutgoingMessage[] = [];
  private refusals = 0;

  /** The next `times` publishes fail, as a broker that is down would make them. */
  failNext(times = 1): void {
    this.refusals += times;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    if (this.refusals > 0) {
      this.refusals -= 1;
      throw new Error(`RecordingOutboxTransport refused ${message.envelope.type} (failNext)`);
    }
    this.published.push(message);
  }

  clear(): void {
    this.published.length = 0;
    this.refusals = 0;
  }
}
