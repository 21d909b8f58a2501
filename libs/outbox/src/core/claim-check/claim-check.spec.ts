import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { OutboxConfigurationError, OutboxNonRetryableError, OutboxWriteError } from '../outbox.errors';
import { OutboxMessageFactory, type MessageDraft } from '../outbox-message.factory';
import { resolveOutboxSettings } from '../outbox-options';
import { toOutboxEvent } from '../typed/to-outbox-event';
import { OutboxEvent } from '../../decorators/outbox-event.decorator';
import { CLAIM_CHECK_DEFAULTS, resolveClaimCheck } from './claim-check-options';
import { ClaimCheck } from './claim-check';
import { CLAIM_CHECK_HEADER, referenceOf, type ClaimCheckReference } from './claim-check-reference';
import { ClaimCheckError, ClaimedPayloadReader } from './claimed-payload.reader';
import type { PayloadReader } from './payload-store.port';

const WHERE = { store: 'database', location: 'outbox_messages_payloads' };
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('claimCheck option', () => {
  it('is off unless asked for; true takes the defaults', () => {
    expect(resolveClaimCheck(undefined, 1_048_576)).toBeUndefined();
    expect(resolveClaimCheck(false, 1_048_576)).toBeUndefined();
    const defaults = { store: 'database', thresholdBytes: CLAIM_CHECK_DEFAULTS.thresholdBytes, maxBytes: CLAIM_CHECK_DEFAULTS.maxBytes };
    expect(resolveClaimCheck(true, 1_048_576)).toEqual(defaults);
    expect(resolveOutboxSettings({ claimCheck: { thresholdBytes: 1_000 } }, () => 'r').claimCheck).toEqual({ ...defaults, thresholdBytes: 1_000 });
  });

  it('takes a bucket, and the defaults of the S3 store', () => {
    expect(resolveClaimCheck({ store: 's3', bucket: 'outbox-payloads' }, 1_048_576)).toEqual({
      store: 's3',
      bucket: 'outbox-payloads',
      prefix: 'outbox-payloads/',
      s3Config: {},
      s3Client: undefined,
      orphanGraceMs: 3_600_000,
      thresholdBytes: 262_144,
      maxBytes: 67_108_864,
    });
  });

  it.each([
    [{ thresholdBytes: 0 }, /"claimCheck.thresholdBytes" must be a whole number of bytes, 1 or more; got 0/],
    [{ maxBytes: 1.5 }, /"claimCheck.maxBytes" must be a whole number of bytes/],
    [{ store: 's4' }, /"claimCheck.store" must be 'database' or 's3'; got "s4"/],
    [{ store: 's3' }, /"claimCheck.bucket" must be an S3 bucket name \(3 to 63 lowercase letters, digits, dots and hyphens\); got undefined/],
    [{ store: 's3', bucket: 'No_Such' }, /"claimCheck.bucket" must be an S3 bucket name/],
    [{ bucket: 'payloads' }, /"claimCheck.bucket" must be left out unless "claimCheck.store" is 's3'/],
    [{ store: 's3', bucket: 'payloads', s3Client: {} }, /"claimCheck.s3Client" must be an S3Client of @aws-sdk\/client-s3/],
    [{ store: 's3', bucket: 'payloads', orphanGraceMs: -1 }, /"claimCheck.orphanGraceMs" must be a whole number of milliseconds/],
    [{ thresholdBytes: 2_000_000 }, /"claimCheck.thresholdBytes" \(2000000\) is over "maxPayloadBytes" \(1048576\)/],
    [{ thresholdBytes: 1_000, maxBytes: 999 }, /"claimCheck.maxBytes" must be at least "claimCheck.thresholdBytes" \(1000\)/],
    ['yes', /"claimCheck" must be true, false or an object/],
  ])('refuses %j naming the option', (options, message) => {
    const resolve = () => resolveOutboxSettings({ claimCheck: options as never }, () => 'r');
    expect(resolve).toThrow(OutboxConfigurationError);
    expect(resolve).toThrow(message);
  });
});

describe('ClaimCheck', () => {
  const claims = new ClaimCheck({ thresholdBytes: 10, maxBytes: 100, store: 'database' }, WHERE);

  it('leaves a payload at or under the threshold in the message', () => {
    expect(claims.claim('t', 'k', '"12345678"')).toBeUndefined();
  });

  it('replaces a larger one by a reference with its size and SHA-256, and marks the message with the header', () => {
    const json = JSON.stringify({ text: 'more than ten bytes' });
    const part = claims.claim('t', 'key-1', json)!;
    const reference: ClaimCheckReference = { ...WHERE, key: 'key-1', sha256: sha256(json), bytes: Buffer.byteLength(json) };
    expect(part.claimed).toEqual({ reference, payloadJson: json });
    expect(JSON.parse(part.payloadJson)).toEqual({ outboxClaimCheck: reference });
    expect(referenceOf(part.headers)).toEqual(reference);
  });

  it('counts bytes, not characters', () => {
    expect(claims.claim('t', 'k', JSON.stringify('ééééé'))?.claimed.reference.bytes).toBe(12);
  });

  it('refuses a payload over maxBytes naming the event and the option', () => {
    expect(() => claims.claim('orders.scanned', 'k', JSON.stringify('x'.repeat(200)))).toThrow(OutboxWriteError);
    expect(() => claims.claim('orders.scanned', 'k', JSON.stringify('x'.repeat(200)))).toThrow(/"orders.scanned".*202 bytes, over the 100 bytes.*"claimCheck.maxBytes"/);
  });
});

describe('OutboxMessageFactory with a claim check', () => {
  let next = 0;
  const ids = () => `0190000${next++}-0000-7000-8000-000000000000`;
  const draft: MessageDraft = { type: 'docs.scanned', version: 1, aggregateType: 'doc', aggregateId: 'd-1', payload: { text: 'y'.repeat(50) } };
  const claims = new ClaimCheck({ thresholdBytes: 20, maxBytes: 1_000, store: 'database' }, WHERE);

  it('stores the payload once, under the first row id, and every destination carries the reference', () => {
    const factory = new OutboxMessageFactory({ defaultTopic: 'docs', routes: [{ transport: 'audit', topic: 'audit' }], claims }, ids);
    const [first, second] = factory.create(draft);
    expect(first.claimed?.reference.key).toBe(first.id);
    expect(second.claimed).toBeUndefined();
    expect(second.payloadJson).toBe(first.payloadJson);
    expect(JSON.parse(first.payloadJson).outboxClaimCheck.key).toBe(first.id);
    expect(second.headers[CLAIM_CHECK_HEADER]).toBe(first.headers[CLAIM_CHECK_HEADER]);
    expect(first.claimed?.payloadJson).toBe(JSON.stringify(draft.payload));
  });

  it('stores a payload over maxPayloadBytes instead of refusing it: the limit is what the message carries', () => {
    const factory = new OutboxMessageFactory({ defaultTopic: 'docs', maxPayloadBytes: 30, claims }, ids);
    expect(factory.create(draft)[0].claimed).toBeDefined();
    expect(() => new OutboxMessageFactory({ defaultTopic: 'docs', maxPayloadBytes: 30 }, ids).create(draft)).toThrow(/over the limit of 30 bytes \(option "maxPayloadBytes"\).*"claimCheck"/);
  });
});

describe('ClaimedPayloadReader', () => {
  const json = JSON.stringify({ pages: ['a', 'b'] });
  const reference: ClaimCheckReference = { ...WHERE, key: 'k-1', sha256: sha256(json), bytes: Buffer.byteLength(json) };
  const envelope = () => ({ id: 'k-1', headers: { [CLAIM_CHECK_HEADER]: JSON.stringify(reference) }, payload: { outboxClaimCheck: reference } as unknown });
  const readerOf = (stored: string | undefined, location = WHERE.location): PayloadReader => ({ name: 'database', location, get: async () => stored });

  it('puts the stored payload back into the envelope, in place', async () => {
    const received = envelope();
    await expect(new ClaimedPayloadReader([readerOf(json)]).resolve(received)).resolves.toBe(received);
    expect(received.payload).toEqual({ pages: ['a', 'b'] });
  });

  it('leaves an envelope without the header as it is, without asking a store', async () => {
    const get = jest.fn();
    const plain = { headers: {}, payload: { outboxClaimCheck: 'a payload that happens to use the name' } };
    await new ClaimedPayloadReader([{ name: 'database', get }]).resolve(plain);
    expect(plain.payload).toEqual({ outboxClaimCheck: 'a payload that happens to use the name' });
    expect(get).not.toHaveBeenCalled();
  });

  it.each([
    ['missing', readerOf(undefined), /"database:outbox_messages_payloads\/k-1" is not in its store/],
    ['of another size', readerOf(`${json} `), /does not match its reference: 20 bytes stored, 19 expected/],
    ['altered', readerOf(json.replace('a', 'c')), /does not match its reference: its SHA-256 differs/],
    ['in a table this consumer does not read', readerOf(json, 'other_payloads'), /names a store this consumer cannot read; it reads "database:other_payloads"/],
  ])('fails with a ClaimCheckError naming the reference when the payload is %s', async (_, reader, message) => {
    const failure = new ClaimedPayloadReader([reader]).resolve(envelope());
    await expect(failure).rejects.toBeInstanceOf(ClaimCheckError);
    await expect(failure).rejects.toBeInstanceOf(OutboxNonRetryableError);
    await expect(failure).rejects.toThrow(message);
  });

  it('refuses a header that is not a reference, naming it', async () => {
    await expect(new ClaimedPayloadReader([]).resolve({ headers: { [CLAIM_CHECK_HEADER]: '{"store":1}' }, payload: null })).rejects.toThrow(/"outbox-claim-check" must hold a claim-check reference/);
  });
});

describe('toOutboxEvent of a claim-checked envelope', () => {
  @OutboxEvent('docs.archived')
  class DocumentArchived {
    title!: string;
  }

  it('refuses the reference instead of building an event from it, saying how to fetch the payload', () => {
    const reference: ClaimCheckReference = { ...WHERE, key: 'k-2', sha256: '0'.repeat(64), bytes: 1 };
    const received = { type: 'docs.archived', version: 1, headers: { [CLAIM_CHECK_HEADER]: JSON.stringify(reference) }, payload: { outboxClaimCheck: reference } };
    expect(() => toOutboxEvent(DocumentArchived, received)).toThrow(OutboxNonRetryableError);
    expect(() => toOutboxEvent(DocumentArchived, received)).toThrow(/"docs.archived" carries a claim-check reference "database:outbox_messages_payloads\/k-2".*OutboxInbox.resolvePayload/);
    // Once resolved, the header stays but the payload is the event's.
    expect(toOutboxEvent(DocumentArchived, { ...received, payload: { title: 'T' } }).title).toBe('T');
  });
});
