import { formatOf, type EnvelopeFormat, type ResolvedEnvelopeOptions } from '../../core/cloudevents/envelope-options';
import { unsentFormat } from '../../core/cloudevents/cloudevents.messages';
import { OutboxNonRetryableError } from '../../core/outbox.errors';
import type { OutgoingMessage } from '../../core/outbox-message';
import type { Acknowledgement, OutboxTransport } from '../../core/outbox-transport.port';
import { encodeCloudEvent } from './cloudevents-encoder';
import type { CloudEventsSdk } from './cloudevents.peer';

/** The formats a transport sends when it says nothing: the outbox envelope only. */
export const OUTBOX_ONLY: readonly EnvelopeFormat[] = ['outbox'];

/**
 * Puts each message in its destination's format (the `envelope` option) on its way to the
 * transport it wraps, whichever delivery (table or WAL) claimed it. Destinations in the outbox
 * format pass through untouched. A message the transport cannot send in its format, or that is no
 * valid CloudEvent, fails alone and for good (non-retryable, its row dead with the reason).
 */
export class EnvelopeFormatTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement?: Acknowledgement;
  readonly acknowledgementNote?: string;
  readonly keepsKeyOrderInBatch?: boolean;
  readonly envelopeFormats: readonly EnvelopeFormat[];
  readonly publishBatch?: (messages: OutgoingMessage[]) => Promise<Array<Error | undefined>>;

  constructor(
    private readonly inner: OutboxTransport,
    private readonly envelope: ResolvedEnvelopeOptions,
    private readonly sdk: CloudEventsSdk,
  ) {
    this.name = inner.name;
    this.acknowledgement = inner.acknowledgement;
    this.acknowledgementNote = inner.acknowledgementNote;
    this.keepsKeyOrderInBatch = inner.keepsKeyOrderInBatch;
    this.envelopeFormats = inner.envelopeFormats ?? OUTBOX_ONLY;
    if (inner.publishBatch) this.publishBatch = (messages) => this.publishShapedBatch(messages);
  }

  async connect(destinations?: readonly string[]): Promise<void> {
    await this.inner.connect?.(destinations);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }

  async publish(message: OutgoingMessage): Promise<void> {
    await this.inner.publish(this.shape(message));
  }

  private async publishShapedBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    const outcomes = new Array<Error | undefined>(messages.length);
    const shaped: OutgoingMessage[] = [];
    const indexes: number[] = [];
    // A batch may hold several messages of one aggregate: after one that failed, the later ones wait for the next attempt, in order.
    const failedKeys = new Set<string>();
    messages.forEach((message, index) => {
      const key = `${message.destination}\u0000${message.key}`;
      if (failedKeys.has(key)) {
        outcomes[index] = new Error(`not sent: an earlier message of aggregate "${message.key}" to "${message.destination}" failed in this batch`);
        return;
      }
      try {
        shaped.push(this.shape(message));
        indexes.push(index);
      } catch (error) {
        outcomes[index] = error as Error;
        failedKeys.add(key);
      }
    });
    if (shaped.length > 0) {
      const sent = await this.inner.publishBatch!(shaped);
      indexes.forEach((index, at) => (outcomes[index] = sent[at]));
    }
    return outcomes;
  }

  private shape(message: OutgoingMessage): OutgoingMessage {
    const format = formatOf(this.envelope, message.destination);
    if (format === 'outbox') return message;
    if (!this.envelopeFormats.includes(format)) throw new OutboxNonRetryableError(unsentFormat(message.destination, format, this.name));
    try {
      return encodeCloudEvent(this.sdk, message, format, this.envelope.source!);
    } catch (error) {
      // The SDK's ValidationError: the same event would be refused on every attempt.
      throw new OutboxNonRetryableError(`CloudEvent refused by the cloudevents SDK: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
