import { checkMessageId, decodeEnvelope, isOutboxEnvelope, keyOfRaw, storedForm } from './poison-decoding';

const envelope = { id: '0190a8f0-0000-7000-8000-000000000001', type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId: 'o-1', occurredAt: '2026-01-01T00:00:00.000Z', headers: {}, payload: {} };

describe('poison decoding', () => {
  it('accepts an outbox envelope and a plain id', () => {
    expect(decodeEnvelope(envelope)).toEqual({ ok: true, messageId: envelope.id });
    expect(checkMessageId('m-1')).toEqual({ ok: true, messageId: 'm-1' });
    expect(isOutboxEnvelope(envelope)).toBe(true);
  });

  it.each([
    ['a string', 'hello', 'not an outbox envelope: got a string'],
    ['null', null, 'not an outbox envelope: got null'],
    ['an array', [envelope], 'not an outbox envelope: got an array'],
    ['no id', { ...envelope, id: undefined }, 'not an outbox envelope: "id" is missing, expected a string'],
    ['a numeric id', { ...envelope, id: 7 }, 'not an outbox envelope: "id" is a number, expected a string'],
    ['a string version', { ...envelope, version: '1' }, 'not an outbox envelope: "version" is a string, expected a number'],
    ['null headers', { ...envelope, headers: null }, 'not an outbox envelope: "headers" is null, expected an object'],
    ['an empty type', { ...envelope, type: ' ' }, 'not an outbox envelope: "type" is empty'],
    ['a NUL in the id', { ...envelope, id: 'ab\u0000c' }, 'no valid message id: "id" contains a control character (ab\\u0000c)'],
    ['a 256-character id', { ...envelope, id: 'x'.repeat(256) }, 'no valid message id: "id" has 256 characters, expected 1 to 255'],
  ])('refuses %s with its reason', (_case, value, reason) => {
    expect(decodeEnvelope(value)).toEqual({ ok: false, reason });
    expect(isOutboxEnvelope(value)).toBe(false);
  });

  it('stores a message as JSON text without raw control characters, cut to the limit', () => {
    expect(storedForm({ id: 'a\u0000' }, 100)).toEqual({ raw: '{"id":"a\\u0000"}', truncated: false });
    expect(storedForm(Buffer.from('bytes'), 100)).toEqual({ raw: '"bytes"', truncated: false });
    expect(storedForm(undefined, 100)).toEqual({ raw: 'undefined', truncated: false });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(storedForm(circular, 100)).toEqual({ raw: '"[object Object]"', truncated: false });
    expect(storedForm('x'.repeat(50), 10)).toEqual({ raw: '"xxxxxxxxx', truncated: true });
  });

  it('keys an undecodable message by its stored form, so a redelivery counts on the same record', () => {
    expect(keyOfRaw('"hello"')).toBe(keyOfRaw('"hello"'));
    expect(keyOfRaw('"hello"')).not.toBe(keyOfRaw('"hellO"'));
    expect(keyOfRaw('"hello"')).toMatch(/^raw:[0-9a-f]{40}$/);
  });
});
