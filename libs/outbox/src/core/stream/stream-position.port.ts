/**
 * Where the stream keeps the last position whose messages the broker acknowledged, durably and
 * apart from the replication slot. PostgreSQL 15 and 16 write a logical slot's confirmed position
 * to disk only when something else about the slot changes, so after a server restart the slot may
 * replay many seconds of commits the stream had already published; starting the stream from the
 * position kept here skips them.
 */
export interface StreamPositionStore {
  /** The last position saved for this slot, or `undefined` when none was (a new slot). */
  read(): Promise<bigint | undefined>;
  /**
   * Saves a position only if it is past the one saved (positions never move back), and, in the
   * same transaction, adds the messages published since the last save to the per-minute counts
   * that stats and the console read (streamed messages have no row to count).
   */
  save(lsn: bigint, published: readonly PublishedCount[]): Promise<void>;
}

/** Messages the stream published to one destination since the last save. */
export interface PublishedCount {
  transport: string;
  destination: string;
  count: number;
}
