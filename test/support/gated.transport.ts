import type { OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';

/**
 * Holds the publish of the message whose payload `label` is the given one until `open()`, so that a
 * test can stall the stream at a known point; acknowledges every message, in the order published.
 */
export class GatedTransport implements OutboxTransport {
  readonly name = 'gated';
  readonly published: OutgoingMessage[] = [];
  private gate: Promise<void>;
  private release!: () => void;
  /** Set once the gated message has reached the transport (and waits there). */
  reached = false;

  constructor(private readonly label: string) {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release();
  }

  async publish(message: OutgoingMessage): Promise<void> {
    if (labelOf(message) === this.label) {
      this.reached = true;
      await this.gate;
    }
    this.published.push(message);
  }

  /** The labels published for one aggregate (the message key), in order. */
  labels(key: string): string[] {
    return this.published.filter((m) => m.key === key).map(labelOf);
  }
}

function labelOf(message: OutgoingMessage): string {
  return (message.envelope.payload as { label: string }).label;
}
