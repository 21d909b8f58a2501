import type { OutgoingMessage } from './outbox-message';

/**
 * Publishes to a broker. `publish` resolves only once the broker has acknowledged the message
 * (as far as the transport can tell) and rejects otherwise; the relay marks the row published
 * only after it resolved.
 */
export interface OutboxTransport {
  /** Shown in logs and errors, e.g. `kafka` or `tcp`. */
  readonly name: string;
  publish(message: OutgoingMessage): Promise<void>;
}

export function isOutboxTransport(value: unknown): value is OutboxTransport {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as OutboxTransport).publish === 'function' &&
    typeof (value as OutboxTransport).name === 'string'
  );
}
