import type { WalReaderThread } from '../core/stream/wal-options';
import { PgoutputReader, type PgoutputReaderConfig } from './pgoutput.reader';
import { ThreadedWalReader } from './reader-thread/threaded-wal.reader';

/** What the stream asks of the slot's reader, whichever thread it reads on. */
export interface WalReader {
  /** Starts reading from `from` (see PgoutputReader.start); the end comes through `onEnd`. */
  start(from?: bigint): Promise<void>;
  /** Tells the server everything up to this commit end is done. */
  confirm(lsn: bigint): Promise<void>;
  /** Closes the replication connection (and the thread that holds it). */
  stop(): Promise<void>;
}

/** The reader of `wal.readerThread`: on the app's thread, or on a worker thread of its own. */
export function createWalReader(config: PgoutputReaderConfig, thread: WalReaderThread, window: number): WalReader {
  return thread === 'worker' ? new ThreadedWalReader(config, window) : new PgoutputReader(config);
}
