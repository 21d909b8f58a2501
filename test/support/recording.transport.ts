import type { OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';

/** A transport for store tests: records what was published and fails on request. */
export class RecordingTransport implements OutboxTransport {
  readonly name = 'recording';
  readonly delivered: OutgoingMessage[] = [];
  private readonly failures = new Map<string, number>();

  failTimes(messageId: string, times: number): void {
    this.failures.set(messageId, times);
  }

  async publish(message: OutgoingMessage): Promise<void> {
    // Yield so that concurrent relays really interleave.
    await new Promise((resolve) => setImmediate(resolve));
    const left = this.failures.get(message.envelope.id) ?? 0;
    if (left > 0) {
      this.failures.set(message.envelope.id, left - 1);
      throw new Error(`refused ${message.envelope.id}`);
    }
    this.delivered.push(message);
  }
}
