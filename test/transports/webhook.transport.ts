import type { OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';

/**
 * The custom-transport example from the README: POSTs each message to an HTTP endpoint. A 2xx
 * answer is the acknowledgement; anything else rejects, and the relay records and retries it.
 */
export class WebhookTransport implements OutboxTransport {
  readonly name = 'webhook';
  readonly acknowledgement = 'broker' as const;

  constructor(private readonly baseUrl: string) {}

  async publish(message: OutgoingMessage): Promise<void> {
    const response = await fetch(`${this.baseUrl}/${encodeURIComponent(message.destination)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...message.headers },
      body: JSON.stringify(message.envelope),
      signal: AbortSignal.timeout(5_000),
    });
    if (!response.ok) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
  }
}
