import { OutboxNonRetryableError } from '../outbox.errors';
import { malformedReference } from './claim-check.messages';

/**
 * Header of a message whose payload was stored out of it: its value is the reference as JSON. It is
 * a row header, so every transport carries it and the envelope lists it under `headers` too.
 */
export const CLAIM_CHECK_HEADER = 'outbox-claim-check';

/** The envelope's `payload` of a claim-checked message: `{ [CLAIM_CHECK_FIELD]: reference }`. */
export const CLAIM_CHECK_FIELD = 'outboxClaimCheck';

/** Where a payload that was too large for its message lives, and how to know it is whole. */
export interface ClaimCheckReference {
  /** `database`: the payloads table beside the outbox; `s3`: an S3 bucket. */
  store: string;
  /** The payloads table (`schema.table` or `table`), or the bucket. */
  location: string;
  /** The row's `payload_key`, or the object key. */
  key: string;
  /** Hex SHA-256 of the stored payload's UTF-8 JSON. */
  sha256: string;
  /** Size of the stored payload's UTF-8 JSON, in bytes. */
  bytes: number;
}

/** A payload to store, with the reference the message carries in its place. */
export interface ClaimedPayload {
  reference: ClaimCheckReference;
  /** The payload's JSON, as it would have gone into the message. */
  payloadJson: string;
}

/** For messages: `database:outbox_messages_payloads/0193…`. */
export function describeReference(reference: ClaimCheckReference): string {
  return `"${reference.store}:${reference.location}/${reference.key}"`;
}

/** The reference a received message carries in its headers, or `undefined` when its payload is inline. A malformed one is never retried. */
export function referenceOf(headers: Record<string, unknown> | undefined): ClaimCheckReference | undefined {
  const raw = headers?.[CLAIM_CHECK_HEADER];
  if (raw === undefined || raw === null) return undefined;
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : raw;
  let parsed: unknown;
  try {
    parsed = typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    throw new OutboxNonRetryableError(malformedReference(CLAIM_CHECK_HEADER, text));
  }
  if (!isReference(parsed)) throw new OutboxNonRetryableError(malformedReference(CLAIM_CHECK_HEADER, text));
  return parsed;
}

function isReference(value: unknown): value is ClaimCheckReference {
  const candidate = value as Partial<ClaimCheckReference> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.store === 'string' &&
    typeof candidate.location === 'string' &&
    typeof candidate.key === 'string' &&
    typeof candidate.sha256 === 'string' &&
    Number.isSafeInteger(candidate.bytes)
  );
}
