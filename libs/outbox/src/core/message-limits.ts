import { OutboxWriteError } from './outbox.errors';
import { metadataTooLong, tooManyHeaders } from './outbox.messages';
import type { NewOutboxMessage } from './outbox-message';

/**
 * Sizes a message must keep to be written: the widths of the outbox table's columns, and bounds on
 * headers that every broker can carry. Checked before the INSERT so that a long request header
 * fails the save with the field's name rather than a database error (or a 500 in a web app).
 */
export const MESSAGE_LIMITS = {
  /** event type, aggregate type and id, destination, correlation/causation/tenant id (varchar(255)). */
  textField: 255,
  headerCount: 64,
  headerName: 255,
  headerValue: 8_192,
} as const;

const TEXT_FIELDS = [
  ['type', 'the event type'],
  ['aggregateType', 'the aggregate type'],
  ['aggregateId', 'the aggregate id'],
  ['destination', 'the destination (topic)'],
  ['correlationId', 'correlationId'],
  ['causationId', 'causationId'],
  ['tenantId', 'tenantId'],
] as const;

export function checkMessageLimits(message: NewOutboxMessage): void {
  for (const [field, label] of TEXT_FIELDS) {
    const value = message[field];
    if (value !== undefined && value.length > MESSAGE_LIMITS.textField) {
      throw new OutboxWriteError(metadataTooLong(message.type.slice(0, 80), label, value.length, MESSAGE_LIMITS.textField));
    }
  }
  const headers = Object.entries(message.headers);
  if (headers.length > MESSAGE_LIMITS.headerCount) throw new OutboxWriteError(tooManyHeaders(message.type, headers.length, MESSAGE_LIMITS.headerCount));
  for (const [name, value] of headers) {
    if (name.length > MESSAGE_LIMITS.headerName) {
      throw new OutboxWriteError(metadataTooLong(message.type, `a header name ("${name.slice(0, 40)}…")`, name.length, MESSAGE_LIMITS.headerName));
    }
    if (value.length > MESSAGE_LIMITS.headerValue) {
      throw new OutboxWriteError(metadataTooLong(message.type, `header "${name}"`, value.length, MESSAGE_LIMITS.headerValue));
    }
  }
}

/**
 * What is kept of publish failures: an error text is cut to `textChars` (a 1 MB transport error
 * would otherwise be stored once per attempt), and a row's error history keeps the latest
 * `historyEntries` attempts.
 */
export const ERROR_LIMITS = {
  textChars: 2_000,
  historyEntries: 20,
} as const;

export function clipErrorText(text: string): string {
  if (text.length <= ERROR_LIMITS.textChars) return text;
  return `${text.slice(0, ERROR_LIMITS.textChars)}… (${text.length - ERROR_LIMITS.textChars} more characters cut)`;
}
