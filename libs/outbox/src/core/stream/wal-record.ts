import type { NewOutboxMessage } from '../outbox-message';
import type { StreamMessage } from './stream-message';

/**
 * What one write puts in the WAL: the messages of one `write` call as one logical decoding message
 * (one WAL record rather than one per event), in the order they were captured. Versioned, so that
 * a relay of a later release can still read what an earlier one wrote before an upgrade.
 */
interface WalRecord {
  v: 1;
  // A message as written: the row's fields, the time as ISO text and the payload as its JSON text.
  messages: Array<Omit<NewOutboxMessage, 'occurredAt' | 'payloadJson' | 'delayMs'> & { occurredAt: string; payload: string }>;
}

/**
 * The prefix of the outbox's logical messages for one stream. A slot decodes every message of its
 * database, so the prefix names the slot the messages are for: apps (or tests) that share a
 * database with slots of their own never read each other's events.
 */
export function walMessagePrefix(slotName: string): string {
  return `nest-outbox:${slotName}`;
}

export function encodeWalRecord(messages: readonly NewOutboxMessage[]): string {
  // Delayed messages never reach the WAL (the writer keeps them in the table), so delayMs is dropped.
  const record: WalRecord = {
    v: 1,
    messages: messages.map(({ occurredAt, payloadJson, delayMs: _delayMs, ...fields }) => ({ ...fields, occurredAt: occurredAt.toISOString(), payload: payloadJson })),
  };
  return JSON.stringify(record);
}

/** The messages of one record; throws, saying what is wrong, on anything the writer did not write. */
export function decodeWalRecord(content: string): Array<Omit<StreamMessage, 'commit' | 'index'>> {
  const record = JSON.parse(content) as Partial<WalRecord>;
  if (record?.v !== 1 || !Array.isArray(record.messages)) throw new Error(`unknown record version ${JSON.stringify(record?.v)}`);
  return record.messages.map((m, index) => {
    for (const field of ['id', 'type', 'aggregateType', 'aggregateId', 'transport', 'destination', 'occurredAt', 'payload'] as const) {
      if (typeof m?.[field] !== 'string') throw new Error(`message ${index}: "${field}" is not a string`);
    }
    if (!Number.isSafeInteger(m.version)) throw new Error(`message ${index}: "version" is not an integer`);
    const { payload, headers, ...fields } = m;
    return { ...fields, headers: headers ?? {}, payloadJson: payload };
  });
}
