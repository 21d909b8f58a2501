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

export function encodeWalRecord(messages: readonly NewOutboxMessage[]): string {
  // Delayed messages never reach the WAL (the writer keeps them in the table), so delayMs is dropped.
  const record: WalRecord = {
    v: 1,
    // Field by field rather than rest/spread: this runs once per event inside the saving transaction.
    messages: messages.map((m) => ({
      id: m.id,
      type: m.type,
      version: m.version,
      aggregateType: m.aggregateType,
      aggregateId: m.aggregateId,
      transport: m.transport,
      destination: m.destination,
      occurredAt: m.occurredAt.toISOString(),
      correlationId: m.correlationId,
      causationId: m.causationId,
      tenantId: m.tenantId,
      headers: m.headers,
      payload: m.payloadJson,
    })),
  };
  return JSON.stringify(record);
}

/**
 * The messages of one record, as stream messages numbered from `offset` within their commit (whose
 * position the reader sets once the commit arrives); throws, saying what is wrong, on anything the
 * writer did not write. Each message is built field by field: this runs once per event on the
 * stream's one thread, where object rest/spread cost more than the checks.
 */
export function decodeWalRecord(content: string, offset = 0): StreamMessage[] {
  const record = JSON.parse(content) as Partial<WalRecord>;
  if (record?.v !== 1 || !Array.isArray(record.messages)) throw new Error(`unknown record version ${JSON.stringify(record?.v)}`);
  return record.messages.map((m, index) => {
    for (const field of STRING_FIELDS) {
      if (typeof m?.[field] !== 'string') throw new Error(`message ${index}: "${field}" is not a string`);
    }
    if (!Number.isSafeInteger(m.version)) throw new Error(`message ${index}: "version" is not an integer`);
    return {
      id: m.id,
      type: m.type,
      version: m.version,
      aggregateType: m.aggregateType,
      aggregateId: m.aggregateId,
      transport: m.transport,
      destination: m.destination,
      occurredAt: m.occurredAt,
      correlationId: m.correlationId,
      causationId: m.causationId,
      tenantId: m.tenantId,
      headers: m.headers ?? {},
      payloadJson: m.payload,
      commit: 0n,
      index: offset + index,
    };
  });
}

const STRING_FIELDS = ['id', 'type', 'aggregateType', 'aggregateId', 'transport', 'destination', 'occurredAt', 'payload'] as const;
