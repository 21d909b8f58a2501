import type { WalReaderThread } from '../core/stream/wal-options';
import { PgoutputReader, type PgoutputReaderConfig } from './pgoutput.reader';
import { ThreadedWalReader } from './reader-thread/threaded-wal.reader';
import type { WalReader } from './wal-reader.port';

/** The reader of `wal.readerThread`: on the app's thread, or on a worker thread of its own. */
export function createWalReader(config: PgoutputReaderConfig, thread: WalReaderThread, window: number): WalReader {
  return thread === 'worker' ? new ThreadedWalReader(config, window) : new PgoutputReader(config);
}
