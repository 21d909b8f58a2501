import { noSuchHandler } from '../core/in-process.messages';
import type { OutboxEnvelope, OutgoingMessage } from '../core/outbox-message';
import type { OutboxTransport } from '../core/outbox-transport.port';

/** The transport name of rows meant for in-process handlers; reserved. */
export const IN_PROCESS_TRANSPORT = 'in-process';

export type InProcessHandler = (envelope: OutboxEnvelope) => Promise<unknown> | unknown;

/**
 * "Publishes" a row by running the handler its destination names, in this process. The row is
 * published once the handler has returned; a throw is a failed attempt like a broker error.
 */
export class InProcessTransport implements OutboxTransport {
  readonly name = IN_PROCESS_TRANSPORT;
  readonly acknowledgement = 'broker' as const;

  constructor(private readonly handlers: ReadonlyMap<string, InProcessHandler>) {}

  async publish(message: OutgoingMessage): Promise<void> {
    const handler = this.handlers.get(message.destination);
    if (!handler) throw new Error(noSuchHandler(message.destination));
    await handler(message.envelope);
  }
}
