import { createHash } from 'node:crypto';
import { badMessageId, notAnEnvelope } from './poison.messages';

/** What a delivery turned out to be: a message with an id, or poison with the reason why. */
export type Decoded = { ok: true; messageId: string } | { ok: false; reason: string };

const MAX_ID = 255;
// A NUL is refused by PostgreSQL text columns and other control characters are never in an id the outbox made.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `value` is an outbox envelope the inbox can process: the checks `@Idempotent()` makes before running a handler. */
export function isOutboxEnvelope(value: unknown): value is { id: string; type: string } {
  return decodeEnvelope(value).ok;
}

/** Checks an id the inbox can store and compare: a string of 1 to 255 characters without control characters. */
export function checkMessageId(id: unknown): Decoded {
  if (typeof id !== 'string') return { ok: false, reason: badMessageId(`"id" is ${kind(id)}, expected a string`) };
  if (id === '' || id.length > MAX_ID) return { ok: false, reason: badMessageId(`"id" has ${id.length} characters, expected 1 to ${MAX_ID}`) };
  if (CONTROL.test(id)) return { ok: false, reason: badMessageId(`"id" contains a control character (${escapeControl(id.slice(0, 80))})`) };
  return { ok: true, messageId: id };
}

/** Fields of an outbox envelope and the type each must have when present; `id` and `type` are required. */
const FIELDS: Array<[string, 'string' | 'number' | 'object', boolean]> = [
  ['id', 'string', true],
  ['type', 'string', true],
  ['version', 'number', false],
  ['aggregateType', 'string', false],
  ['aggregateId', 'string', false],
  ['occurredAt', 'string', false],
  ['headers', 'object', false],
];

/** Decodes a delivery meant to be an outbox envelope (what `@Idempotent()` handlers receive). */
export function decodeEnvelope(value: unknown): Decoded {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: notAnEnvelope(`got ${kind(value)}`) };
  const record = value as Record<string, unknown>;
  for (const [field, type, required] of FIELDS) {
    const got = record[field];
    if (got === undefined && !required) continue;
    if (typeof got !== type || got === null) return { ok: false, reason: notAnEnvelope(`"${field}" is ${kind(got)}, expected ${type === 'object' ? 'an object' : `a ${type}`}`) };
  }
  if ((record.type as string).trim() === '') return { ok: false, reason: notAnEnvelope('"type" is empty') };
  return checkMessageId(record.id);
}

/** The message as JSON text (NUL and other control characters escaped, so every database stores it), cut to `maxChars`. */
export function storedForm(value: unknown, maxChars: number): { raw: string; truncated: boolean } {
  let text: string;
  if (Buffer.isBuffer(value)) text = JSON.stringify(value.toString('utf8'));
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = JSON.stringify(String(value));
    }
  }
  text = escapeControl(text);
  return text.length > maxChars ? { raw: text.slice(0, maxChars), truncated: true } : { raw: text, truncated: false };
}

/** The record key of a delivery without a usable id: the same bytes redelivered count on one record. */
export function keyOfRaw(raw: string): string {
  return `raw:${createHash('sha256').update(raw).digest('hex').slice(0, 40)}`;
}

export function escapeControl(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
