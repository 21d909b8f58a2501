import type { OutboxTransport } from '@nest-outbox/outbox';
import { RetryPolicy, type OutgoingMessage } from '@nest-outbox/outbox/core';
import { StreamRelay } from '../../libs/outbox/src/core/stream/stream-relay';
import type { StreamMessage } from '../../libs/outbox/src/core/stream/stream-message';

/**
 * The WAL mode's publish path as a transport, for the transport contract: each call is one commit
 * handed to a `StreamRelay` that publishes through `inner`, and resolves only when the relay
 * confirms that commit, which it does once the broker acknowledged every message of it and of the
 * commits before. A broker that never acknowledges leaves the call pending: the stream waits and
 * tries again, it never confirms (no overflow table here, so nothing is moved aside).
 */
export class StreamRelayTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement: OutboxTransport['acknowledgement'];
  readonly keepsKeyOrderInBatch: boolean;
  private readonly relay: StreamRelay;
  private lsn = 0n;
  private readonly waiting = new Map<bigint, () => void>();

  constructor(private readonly inner: OutboxTransport, publishTimeoutMs: number) {
    this.name = `stream relay over ${inner.name}`;
    this.acknowledgement = inner.acknowledgement;
    // The stream hands a transport that keeps key order a batch with several messages of one key.
    this.keepsKeyOrderInBatch = inner.keepsKeyOrderInBatch === true;
    this.relay = new StreamRelay({
      transports: new Map([['default', inner]]),
      batchSize: 100,
      maxBuffered: 1_000,
      publishTimeoutMs,
      retryPolicy: new RetryPolicy(Number.MAX_SAFE_INTEGER, { initialMs: 100, maxMs: 500, jitter: 0 }),
      observer: {}, relayId: 'stream-test',
      logger: { warn: () => undefined },
      confirm: (lsn) => {
        for (const [commit, resume] of this.waiting) if (commit <= lsn) (this.waiting.delete(commit), resume());
      },
    });
  }

  async publish(message: OutgoingMessage): Promise<void> {
    await this.commit([message]);
  }

  async publishBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    await this.commit(messages);
    return messages.map(() => undefined);
  }

  async close(): Promise<void> {
    await this.relay.stop();
    await this.inner.close?.();
  }

  private async commit(messages: OutgoingMessage[]): Promise<void> {
    const lsn = (this.lsn += 16n);
    const confirmed = new Promise<void>((resume) => this.waiting.set(lsn, resume));
    await this.relay.accept({ lsn, messages: messages.map((message, index) => streamMessageOf(message, lsn, index)) });
    await confirmed;
  }
}

/** What the writer puts in the WAL for this message: the relay rebuilds the same outgoing message from it. */
function streamMessageOf(message: OutgoingMessage, commit: bigint, index: number): StreamMessage {
  const { envelope } = message;
  return {
    id: envelope.id,
    type: envelope.type,
    version: envelope.version,
    aggregateType: envelope.aggregateType,
    aggregateId: envelope.aggregateId,
    occurredAt: envelope.occurredAt,
    correlationId: envelope.correlationId,
    causationId: envelope.causationId,
    tenantId: envelope.tenantId,
    headers: envelope.headers,
    payloadJson: JSON.stringify(envelope.payload),
    transport: 'default',
    destination: message.destination,
    commit,
    index,
  };
}
