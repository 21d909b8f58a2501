/**
 * The entry of the WAL reader's worker thread (`wal.readerThread: 'worker'`), started by
 * ThreadedWalReader with a ReaderThreadInit as its workerData. Anywhere else (the app's thread,
 * which imports this file so that every build that compiles the reader compiles its entry too)
 * it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { PgoutputReader } from '../pgoutput.reader';
import { ReaderThreadHost } from './reader-thread.host';
import { READER_THREAD_MARK, type ReaderThreadInit, type ToReaderThread } from './reader-thread.protocol';

const init = workerData as (ReaderThreadInit & { [READER_THREAD_MARK]?: true }) | null;
if (!isMainThread && parentPort && init?.[READER_THREAD_MARK]) {
  const port = parentPort;
  const host = new ReaderThreadHost(port, init, (config) => new PgoutputReader(config));
  port.on('message', (message: ToReaderThread) => host.receive(message));
  host.start();
}
