import { OutboxConfigurationError } from '../outbox.errors';
import { invalidOption } from '../outbox.messages';
import { invalidSlotName } from './stream.messages';

/** How events reach the broker. */
export type OutboxDelivery = 'table' | 'wal';

/**
 * What a save writes in the WAL mode (docs/wal-mode.md, "What survives what"):
 * - `'row'`: an outbox row that the stream decodes from the table's insert and deletes once the
 *   broker acknowledged it. The row outlives the slot: a slot dropped, invalidated or missing after a
 *   failover loses nothing (its rows go to the table relay when a new slot is made).
 * - `'message'`: a logical decoding message only (no row, no index). The slot holds the only copy:
 *   what it held is lost with it, which the stream reports as an incident.
 */
export type WalWrite = 'row' | 'message';

/**
 * Where the stream reads and decodes the WAL (docs/wal-mode.md, "The reader's thread"):
 * - `'main'`: on the app's thread, beside the producer's calls.
 * - `'worker'`: on a worker thread of its own (the replication connection, pgoutput's parsing, the
 *   records' JSON), which hands each commit's decoded messages to the app's thread, where the
 *   transports publish them.
 */
export type WalReaderThread = 'main' | 'worker';

/** Settings of the WAL delivery mode (`delivery: 'wal'`); ignored in the table mode. */
export interface WalDeliveryOptions {
  /**
   * What a save writes: `'row'` (an outbox row the stream publishes and then deletes; survives a lost
   * slot) or `'message'` (a WAL message only; cheaper, lost with the slot). Default `'row'`.
   */
  write?: WalWrite;
  /**
   * Logical replication slot the relay streams from, created on first start and never dropped by
   * the app (`nest-outbox wal drop-slot` does). Lowercase letters, digits and `_`.
   * Default `outbox_<tableName>` (lowercased, schema-qualified tables: `outbox_<schema>_<tableName>`).
   */
  slotName?: string;
  /**
   * Publication named to pgoutput. The outbox writes logical decoding messages, which pgoutput
   * streams whatever the publication lists; the publication holds the outbox table and its
   * paused-destinations table (inserts and updates), so that the stream sees, in commit order, rows
   * that hold an aggregate and pauses. Created (or completed) at start. Default: the slot's name.
   */
  publicationName?: string;
  /**
   * Attempts the stream makes at a message before moving it, and its aggregate's later messages,
   * to the outbox table, where the table relay retries them in order (and makes them dead after
   * `maxAttempts`) while other aggregates stream on. A failure that is final (`retryIf`,
   * `OutboxNonRetryableError`) moves it at once. Default `3`.
   */
  attemptsBeforeTable?: number;
  /**
   * `OutboxWalHealthIndicator` reports down when the slot retains more WAL than this, in bytes
   * (the relay or the broker is behind or down); `null` turns the check off. Default `1073741824` (1 GiB).
   */
  maxRetainedBytes?: number | null;
  /**
   * Where the WAL is read and decoded: `'main'` (the app's thread) or `'worker'` (a worker thread of
   * its own, which takes that work off the thread that publishes; see docs/wal-mode.md for when it
   * pays). Default `'main'`.
   */
  readerThread?: WalReaderThread;
}

export const WAL_DEFAULTS = { write: 'row' as WalWrite, attemptsBeforeTable: 3, maxRetainedBytes: 1_073_741_824, readerThread: 'main' as WalReaderThread } as const;

export const OUTBOX_DELIVERY_DEFAULT: OutboxDelivery = 'table';

const SLOT_NAME = /^[a-z0-9_]{1,63}$/;

/** Refuses a delivery mode or WAL setting that cannot work, naming the option. */
export function validateDelivery(delivery: unknown, wal: unknown): void {
  if (delivery !== 'table' && delivery !== 'wal') throw new OutboxConfigurationError(invalidOption('delivery', `'table' or 'wal'`, delivery));
  if (wal === undefined) return;
  if (typeof wal !== 'object' || wal === null || Array.isArray(wal)) {
    throw new OutboxConfigurationError(invalidOption('wal', 'an object { write?, slotName?, publicationName?, attemptsBeforeTable?, maxRetainedBytes?, readerThread? }', wal));
  }
  const write = (wal as WalDeliveryOptions).write;
  if (write !== undefined && write !== 'row' && write !== 'message') throw new OutboxConfigurationError(invalidOption('wal.write', `'row' or 'message'`, write));
  const readerThread = (wal as WalDeliveryOptions).readerThread;
  if (readerThread !== undefined && readerThread !== 'main' && readerThread !== 'worker') throw new OutboxConfigurationError(invalidOption('wal.readerThread', `'main' or 'worker'`, readerThread));
  const attempts = (wal as WalDeliveryOptions).attemptsBeforeTable;
  if (attempts !== undefined && (!Number.isSafeInteger(attempts) || attempts < 1 || attempts > 1_000)) {
    throw new OutboxConfigurationError(invalidOption('wal.attemptsBeforeTable', 'an integer from 1 to 1000', attempts));
  }
  const retained = (wal as WalDeliveryOptions).maxRetainedBytes;
  if (retained !== undefined && retained !== null && (!Number.isSafeInteger(retained) || retained < 1)) {
    throw new OutboxConfigurationError(invalidOption('wal.maxRetainedBytes', 'a positive integer of bytes, or null', retained));
  }
  const { slotName = 'outbox', publicationName = 'outbox' } = wal as WalDeliveryOptions;
  checkWalNames({ slotName, publicationName });
}

/** Slot and publication names go into SQL text: only what PostgreSQL takes as a slot name passes. */
export function checkWalNames(names: { slotName: unknown; publicationName: unknown }): void {
  for (const key of ['slotName', 'publicationName'] as const) {
    const value = names[key];
    if (typeof value !== 'string' || !SLOT_NAME.test(value)) throw new OutboxConfigurationError(invalidSlotName(`wal.${key}`, String(value)));
  }
}
