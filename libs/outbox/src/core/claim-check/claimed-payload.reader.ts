import { OutboxNonRetryableError } from '../outbox.errors';
import { describeReference, referenceOf, type ClaimCheckReference } from './claim-check-reference';
import { storedPayloadCorrupt, storedPayloadMissing, unknownPayloadStore } from './claim-check.messages';
import { sha256 } from './claim-check';
import type { PayloadReader } from './payload-store.port';

/** A claim-checked payload that cannot be read: missing, altered, or in a store this consumer does not know. Never retried. */
export class ClaimCheckError extends OutboxNonRetryableError {
  constructor(
    message: string,
    readonly reference: ClaimCheckReference,
  ) {
    super(message);
  }
}

/**
 * Puts stored payloads back into received envelopes: what the inbox and `@Idempotent()` handlers run
 * before the handler sees the message. An envelope without the claim-check header is left as it is.
 */
export class ClaimedPayloadReader {
  constructor(private readonly readers: readonly PayloadReader[]) {}

  /** The payload the envelope stands for: fetched and checked when claim-checked, else its own. */
  async payloadOf(envelope: { headers?: Record<string, unknown>; payload?: unknown }): Promise<unknown> {
    const reference = referenceOf(envelope.headers);
    if (reference === undefined) return envelope.payload;
    const shown = describeReference(reference);
    const reader = this.readers.find(({ name, location }) => name === reference.store && (location === undefined || location === reference.location));
    if (!reader) throw new ClaimCheckError(unknownPayloadStore(shown, this.readers.map(({ name, location }) => (location ? `${name}:${location}` : name))), reference);
    const json = await reader.get(reference);
    if (json === undefined) throw new ClaimCheckError(storedPayloadMissing(shown), reference);
    const bytes = Buffer.byteLength(json);
    if (bytes !== reference.bytes) throw new ClaimCheckError(storedPayloadCorrupt(shown, `${bytes} bytes stored, ${reference.bytes} expected`), reference);
    if (sha256(json) !== reference.sha256) throw new ClaimCheckError(storedPayloadCorrupt(shown, 'its SHA-256 differs'), reference);
    return JSON.parse(json);
  }

  /** Replaces the envelope's `payload` with the stored one, in place (the handler holds this object); resolves the envelope. */
  async resolve<E extends { headers?: Record<string, unknown>; payload?: unknown }>(envelope: E): Promise<E> {
    if (referenceOf(envelope.headers) === undefined) return envelope;
    envelope.payload = await this.payloadOf(envelope);
    return envelope;
  }
}
