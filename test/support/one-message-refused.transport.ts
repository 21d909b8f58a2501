import { OutboxNonRetryableError, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';

/**
 * Refuses the message whose payload `label` is the given one: for good (`final`, it goes dead at
 * once) or for now (`retry`); `accept` lets it through. Acknowledges every other message.
 */
export class OneMessageRefused implements OutboxTransport {
  readonly name = 'one-message-refused';
  readonly published: OutgoingMessage[] = [];
  mode: 'final' | 'retry' | 'accept' = 'final';
  constructor(private readonly label: string) {}
  async publish(message: OutgoingMessage): Promise<void> {
    const label = (message.envelope.payload as { label: string }).label;
    if (label === this.label && this.mode === 'final') throw new OutboxNonRetryableError(`${label} rejected for good`);
    if (label === this.label && this.mode === 'retry') throw new Error(`${label} not yet`);
    this.published.push(message);
  }
  /** The labels published for one aggregate (the message key), in order. */
  labels(key: string): string[] {
    return this.published.filter((m) => m.key === key).map((m) => (m.envelope.payload as { label: string }).label);
  }
}
