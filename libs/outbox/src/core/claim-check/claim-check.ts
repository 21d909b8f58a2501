import { createHash } from 'node:crypto';
import { OutboxWriteError } from '../outbox.errors';
import { CLAIM_CHECK_FIELD, CLAIM_CHECK_HEADER, type ClaimCheckReference, type ClaimedPayload } from './claim-check-reference';
import { storedPayloadTooLarge } from './claim-check.messages';
import type { ResolvedClaimCheck } from './claim-check-options';

/** What goes into the message in place of a payload that is stored out of it. */
export interface ClaimedMessagePart {
  /** The envelope's `payload`: `{ outboxClaimCheck: reference }`. */
  payloadJson: string;
  /** The header that marks the message, its value the reference. */
  headers: Record<string, string>;
  claimed: ClaimedPayload;
}

/**
 * The threshold decision: a payload over `thresholdBytes` is stored under `key` (the id of its
 * first row) and replaced by a reference, with its SHA-256 and size so that a reader can tell it is whole.
 */
export class ClaimCheck {
  constructor(
    private readonly settings: ResolvedClaimCheck,
    /** The store's name and location, and the prefix of its keys (the message id follows it). */
    private readonly where: { store: string; location: string; keyPrefix?: string },
  ) {}

  /** `undefined` when the payload stays in the message. */
  claim(eventType: string, key: string, payloadJson: string, bytes = Buffer.byteLength(payloadJson)): ClaimedMessagePart | undefined {
    if (bytes <= this.settings.thresholdBytes) return undefined;
    if (bytes > this.settings.maxBytes) throw new OutboxWriteError(storedPayloadTooLarge(eventType, bytes, this.settings.maxBytes));
    const { store, location, keyPrefix = '' } = this.where;
    const reference: ClaimCheckReference = { store, location, key: keyPrefix + key, sha256: sha256(payloadJson), bytes };
    return {
      payloadJson: JSON.stringify({ [CLAIM_CHECK_FIELD]: reference }),
      headers: { [CLAIM_CHECK_HEADER]: JSON.stringify(reference) },
      claimed: { reference, payloadJson },
    };
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
