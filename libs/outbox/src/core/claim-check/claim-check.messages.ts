/** Every text the claim check shows: each names the option, the reference or the limit, and says what to do. */

export const invalidClaimCheckOption = (path: string, expected: string, got: unknown) =>
  `OutboxModule option "claimCheck.${path}" must be ${expected}; got ${JSON.stringify(got) ?? String(got)}.`;

export const notAClaimCheckOption = (got: unknown) =>
  `OutboxModule option "claimCheck" must be true, false or an object { thresholdBytes?, maxBytes?, store?, bucket?, ... }; got ${JSON.stringify(got) ?? String(got)}.`;

export const thresholdOverMaxPayload = (threshold: number, maxPayloadBytes: number) =>
  `OutboxModule option "claimCheck.thresholdBytes" (${threshold}) is over "maxPayloadBytes" (${maxPayloadBytes}): a payload between the two ` +
  `would be refused instead of stored out of the message. Make "claimCheck.thresholdBytes" at most "maxPayloadBytes".`;

export const storedPayloadTooLarge = (eventType: string, bytes: number, limit: number) =>
  `Event "${eventType}" cannot be written to the outbox: its payload is ${bytes} bytes, over the ${limit} bytes the claim check stores ` +
  `(option "claimCheck.maxBytes"). Raise "claimCheck.maxBytes" or store the data elsewhere and publish a reference to it.`;

export const storedPayloadMissing = (reference: string) =>
  `The claim-checked payload ${reference} is not in its store: it was removed by retention (option "cleanup.publishedRetentionMs") ` +
  `or never written. The event cannot be read without it; the message is not processed.`;

export const storedPayloadCorrupt = (reference: string, what: string) =>
  `The claim-checked payload ${reference} does not match its reference: ${what}. The message is not processed.`;

export const unknownPayloadStore = (reference: string, known: string[]) =>
  `The claim-checked payload ${reference} names a store this consumer cannot read; it reads ${known.map((name) => `"${name}"`).join(', ') || 'none'}. ` +
  `Configure the store (OutboxInboxModule option "claimCheck") or fetch the payload as docs/claim-check.md describes.`;

export const malformedReference = (header: string, value: unknown) =>
  `The message header "${header}" must hold a claim-check reference { store, location, key, sha256, bytes } as JSON; got ${JSON.stringify(value) ?? String(value)}.`;

export const claimCheckedPayloadUnresolved = (eventType: string, reference: string) =>
  `Event "${eventType}" carries a claim-check reference ${reference} instead of its payload: fetch it first ` +
  `(an @Idempotent() handler and OutboxInbox.resolvePayload(envelope) do; see docs/claim-check.md).`;

export const noPayloadStore = (key: string) =>
  `The claim check took the payload of the message "${key}" out of it, but the outbox writer has no payload store to put it in; ` +
  `nothing was written. Give SqlOutboxWriter the "payloadStore" option (OutboxModule does so with "claimCheck").`;

export const payloadsTableUnreadable = (table: string, outboxTable: string, reason: string) =>
  `OutboxModule option "claimCheck" stores payloads in "${table}", which cannot be read (${reason}). ` +
  `An outbox table made before the claim check existed lacks it: add AddOutboxPayloadsTable (or createOutboxPayloadsTableMigration('${outboxTable}')) ` +
  `from '@nest-outbox/outbox/typeorm' to the migrations, or run the CREATE TABLE that "npx nest-outbox sql" prints; or turn "claimCheck" off.`;
