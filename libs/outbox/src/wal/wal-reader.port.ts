/** What the stream asks of the slot's reader, whichever thread it reads on (`wal.readerThread`). */
export interface WalReader {
  /** Starts reading from `from` (see PgoutputReader.start); the end comes through `onEnd`. */
  start(from?: bigint): Promise<void>;
  /** Tells the server everything up to this commit end is done. */
  confirm(lsn: bigint): Promise<void>;
  /** Closes the replication connection (and the thread that holds it). */
  stop(): Promise<void>;
}
