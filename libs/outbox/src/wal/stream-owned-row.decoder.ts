import type { StreamMessage } from '../core/stream/stream-message';
import { STREAM_OWNER } from '../sql/dialects/stream-owned-rows.sql';

/** An outbox row as pgoutput's insert carries it, each column parsed by node-postgres' type parsers. */
export type DecodedOutboxRow = Record<string, unknown>;

/** Whether a decoded insert is a row the stream owns (`wal.write: 'row'`), which it publishes itself. */
export function isStreamOwned(row: DecodedOutboxRow | null | undefined): row is DecodedOutboxRow {
  return row?.lease_owner === STREAM_OWNER;
}

/**
 * The message of a stream-owned row, numbered `index` within its commit (whose position the reader
 * sets once the commit arrives), inserted by transaction `xid`. Field by field, once per event on
 * the stream's one thread.
 */
export function streamMessageOfRow(row: DecodedOutboxRow, index: number, xid: number): StreamMessage {
  const occurredAt = row.occurred_at;
  return {
    id: String(row.id),
    type: String(row.event_type),
    version: Number(row.event_version),
    aggregateType: String(row.aggregate_type),
    aggregateId: String(row.aggregate_id),
    transport: String(row.transport),
    destination: String(row.destination),
    occurredAt: occurredAt instanceof Date ? occurredAt.toISOString() : String(occurredAt),
    correlationId: optional(row.correlation_id),
    causationId: optional(row.causation_id),
    tenantId: optional(row.tenant_id),
    headers: typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : {},
    payloadJson: String(row.payload),
    commit: 0n,
    index,
    row: { position: String(row.position), xid },
  };
}

function optional(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value);
}
