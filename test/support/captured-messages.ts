import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { dropWalSlot } from '../../libs/outbox/src/wal/wal-slot.setup';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { type OutboxModuleOptions } from '@nest-outbox/outbox';
import type { TestDatabase } from './outbox-harness';

/**
 * Where the tests of capture look for what a transaction wrote: the outbox table, or, in the WAL
 * delivery mode on PostgreSQL ('postgres-wal'), the logical decoding messages the slot holds. So
 * one file covers both modes (a `describe.each` over `captureModes`) instead of a copy per mode.
 */
export type CaptureMode = TestDatabase | 'postgres-wal';

/** What the capture wrote for one event, as the tests compare it in either mode. */
export interface CapturedMessage {
  id: string;
  eventType: string;
  aggregateType: string;
  aggregateId: string;
  /** The payload's JSON text. */
  payload: string;
  correlationId: string | null;
}

export interface CaptureReader {
  /** The module options of this mode: the WAL mode with a slot of this test's own, the table mode as given. */
  options(options: OutboxModuleOptions): OutboxModuleOptions;
  /** The committed messages of one aggregate, in the order they were written (commit order in the WAL mode). */
  of(dataSource: DataSource, aggregateId: string): Promise<CapturedMessage[]>;
  /** Drops what the mode made beside the tables (the WAL mode's slot and publication): before the schema goes. */
  drop(dataSource: DataSource): Promise<void>;
}

export function captureReader(mode: CaptureMode): CaptureReader {
  if (mode !== 'postgres-wal') {
    return {
      options: (options) => options,
      of: async (dataSource, aggregateId) =>
        (await dataSource.getRepository(outboxMessageEntity()).find({ where: { aggregateId }, order: { position: 'ASC' } })).map((row) => ({
          id: row.id,
          eventType: row.eventType,
          aggregateType: row.aggregateType,
          aggregateId: row.aggregateId,
          payload: row.payload,
          correlationId: row.correlationId ?? null,
        })),
      drop: async () => undefined,
    };
  }
  // Slots are cluster-wide: one per test file run. A write-only instance (relay: false) creates it
  // at start and nothing reads it, so peeking shows every committed message and consumes none.
  // wal.write 'message': a 'row' write is the table mode's insert (read as in that mode), leased to the stream.
  const slotName = `capture_${randomBytes(5).toString('hex')}`;
  const prefix = `nest-outbox:${slotName}`;
  return {
    options: (options) => ({ ...options, delivery: 'wal', wal: { slotName, write: 'message' } }),
    of: async (dataSource, aggregateId) => {
      const rows: Array<{ content: string }> = await dataSource.query(
        `SELECT convert_from(substring(data FROM 11 + octet_length(p.prefix) + 5), 'UTF8') AS content
           FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2, 'messages', 'true') WITH ORDINALITY AS c(lsn, xid, data, n),
                (SELECT convert_to($3, 'UTF8') AS prefix) AS p
          WHERE get_byte(data, 0) = 77 AND substring(data FROM 11 FOR octet_length(p.prefix) + 1) = p.prefix || '\\x00'::bytea
          ORDER BY n`,
        [slotName, slotName, prefix],
      );
      type Written = { id: string; type: string; aggregateType: string; aggregateId: string; payload: string; correlationId?: string };
      return rows
        .flatMap(({ content }) => (JSON.parse(content) as { messages: Written[] }).messages)
        .filter((message) => message.aggregateId === aggregateId)
        .map((message) => ({
          id: message.id,
          eventType: message.type,
          aggregateType: message.aggregateType,
          aggregateId: message.aggregateId,
          payload: message.payload,
          correlationId: message.correlationId ?? null,
        }));
    },
    drop: async (dataSource) => {
      await dropWalSlot((sql, params) => dataSource.query(sql, params), { slotName, publicationName: slotName });
    },
  };
}
