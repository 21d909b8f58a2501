import { formatOf, type EnvelopeFormat, type ResolvedEnvelopeOptions } from '../../core/cloudevents/envelope-options';
import { unsentFormat } from '../../core/cloudevents/cloudevents.messages';
import { OutboxNonRetryableError } from '../../core/outbox.errors';
import type { OutgoingMessage } from '../../core/outbox-message';
import type { Acknowledgement, OutboxTransport } from '../../core/outbox-transport.port';
import { encodeCloudEvent } from './cloudevents-encoder';
import { publishShapedBatch } from '../../core/shaped-batch';
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
  readonly encodedBodies?: boolean;
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
    this.encodedBodies = inner.encodedBodies;
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

  private publishShapedBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    const shaped = messages.map((message) => {
      try {
        return this.shape(message);
      } catch (error) {
        return error as Error;
      }
    });
    return publishShapedBatch(messages, shaped, (sendable) => this.inner.publishBatch!(sendable));
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
