/**
 * The entry of the WAL reader's worker thread (`wal.readerThread: 'worker'`), started by
 * ThreadedWalReader with a ReaderThreadInit as its workerData.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PgoutputReader } from '../pgoutput.reader';
import { ReaderThreadHost } from './reader-thread.host';
import type { ReaderThreadInit, ToReaderThread } from './reader-thread.protocol';

if (!parentPort) throw new Error('pgoutput.worker runs as a worker thread only (wal.readerThread: "worker").');
const port = parentPort;
const host = new ReaderThreadHost(port, workerData as ReaderThreadInit, (config) => new PgoutputReader(config));
port.on('message', (message: ToReaderThread) => host.receive(message));
host.start();
