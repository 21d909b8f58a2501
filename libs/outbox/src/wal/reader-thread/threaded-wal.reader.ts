import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { errorText } from '../../core/error-text';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import type { ReplicationConnectionConfig } from '../pg-logical-replication.loader';
import type { PgoutputReaderConfig } from '../pgoutput.reader';
import { walReaderThreadConnection, walReaderThreadEntryMissing } from '../wal.messages';
import type { WalReader } from '../wal-reader.port';
import { decodeCommits, READER_THREAD_MARK, type FromReaderThread, type ReaderThreadInit, type ToReaderThread } from './reader-thread.protocol';
// For its file only (it does nothing on this thread): whatever compiles this one compiles the worker's entry beside it.
import './pgoutput.worker';

/** A worker thread as the reader uses it (a Worker; a stand-in in unit tests). */
export interface ReaderThread {
  postMessage(message: ToReaderThread): void;
  on(event: 'message', listener: (message: FromReaderThread) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  terminate(): Promise<number>;
}

// The worker's entry beside this file: pgoutput.worker.js once compiled (from the TypeScript
// source, as the repository's tests run, the process's own -r hook compiles it as it loads).
const WORKER_ENTRY = join(__dirname, `pgoutput.worker${extname(__filename)}`);

// How long a stop waits for the reader to close its connection before the thread is ended anyway.
const STOP_WAIT_MS = 5_000;

export const spawnReaderThread = (init: ReaderThreadInit): ReaderThread => new Worker(WORKER_ENTRY, { workerData: { ...init, [READER_THREAD_MARK]: true }, name: 'nest-outbox WAL reader' });

/** Refuses, at bootstrap, a build that left the thread's entry out (an app bundled into one file, say). */
export function checkReaderThreadEntry(entry = WORKER_ENTRY): void {
  if (!existsSync(entry)) throw new OutboxConfigurationError(walReaderThreadEntryMissing(entry));
}

/**
 * Refuses, at bootstrap, a connection setting that cannot cross to another thread (a function or
 * class instance of `ssl`, say), naming it; a password function is fine (called before each start).
 */
export function checkReaderThreadConnection(connection: ReplicationConnectionConfig): void {
  const { password: _password, ...rest } = connection;
  for (const [key, value] of Object.entries(rest)) {
    try {
      structuredClone(value);
    } catch (error) {
      throw new OutboxConfigurationError(walReaderThreadConnection(key, errorText(error)));
    }
  }
}

/**
 * The app's side of `wal.readerThread: 'worker'`: the slot's reader runs on a worker thread
 * (ReaderThreadHost), and its commits come here, where they are handed to the stream in the order
 * they came, one after another as the main-thread reader would; what the stream has taken is given
 * back as room to read on. Confirmations go the other way. The thread ending for any reason (the
 * reader's end, an uncaught error, an exit) is the stream's end, reported once.
 */
export class ThreadedWalReader implements WalReader {
  private thread: ReaderThread | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  private readonly confirmations = new Map<number, { resolve(): void; reject(error: Error): void }>();
  private stopped: (() => void) | undefined;
  private ended = false;
  private acceptedWeight = 0;

  constructor(
    private readonly config: PgoutputReaderConfig,
    private readonly window: number,
    private readonly spawn: (init: ReaderThreadInit) => ReaderThread = spawnReaderThread,
  ) {}

  async start(from?: bigint): Promise<void> {
    const { onCommit: _onCommit, onCaughtUp: _onCaughtUp, onEnd: _onEnd, connection, ...reader } = this.config;
    // A password given as a function is called here: a function cannot cross to another thread.
    const password = typeof connection.password === 'function' ? await connection.password() : connection.password;
    if (this.ended) return;
    const thread = this.spawn({ reader: { ...reader, connection: { ...connection, password } }, from, window: this.window });
    this.thread = thread;
    thread.on('message', (message) => this.receive(message));
    thread.on('error', (error) => this.end(error));
    thread.on('exit', (code) => (this.stopped ? this.stopped() : this.end(new Error(`the WAL reader's worker thread exited (code ${code})`))));
  }

  confirm(lsn: bigint): Promise<void> {
    const thread = this.thread;
    // As the main-thread reader after its end: nothing to tell; the next stream starts from the slot.
    if (this.ended || !thread) return Promise.resolve();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.confirmations.set(id, { resolve, reject });
      thread.postMessage({ kind: 'confirm', id, lsn });
    });
  }

  async stop(): Promise<void> {
    this.ended = true;
    this.settleConfirmations();
    const thread = this.thread;
    this.thread = undefined;
    if (!thread) return;
    // The reader closes its connection first; the thread goes once it has (or once it has exited).
    const exited = new Promise<void>((resolve) => (this.stopped = resolve));
    const closed = new Promise<void>((resolve) => thread.on('message', (message) => message.kind === 'stopped' && resolve()));
    thread.postMessage({ kind: 'stop' });
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)));
    await Promise.race([closed, exited, waited]);
    clearTimeout(timer);
    await thread.terminate();
  }

  private receive(message: FromReaderThread): void {
    switch (message.kind) {
      case 'commits': {
        for (const commit of decodeCommits(message.commits)) this.then(() => this.config.onCommit(commit));
        this.then(() => this.giveBack(message.weight));
        return;
      }
      case 'caughtUp':
        // Behind the commits sent before it: the stream judges it only once it has taken them.
        this.then(async () => {
          const done = await this.config.onCaughtUp(message.lsn);
          this.thread?.postMessage({ kind: 'caughtUpAnswer', id: message.id, done });
        });
        return;
      case 'confirmed': {
        const waiting = this.confirmations.get(message.id);
        this.confirmations.delete(message.id);
        if (message.error === undefined) waiting?.resolve();
        else waiting?.reject(new Error(message.error));
        return;
      }
      case 'end':
        this.end(new Error(message.error));
        return;
      case 'stopped':
        return;
    }
  }

  /**
   * Room for the reader, given back once per turn of this thread's event loop however many groups
   * were taken in it: each message wakes the reader's thread, which on a machine with fewer cores
   * than busy threads costs a context switch.
   */
  private giveBack(weight: number): void {
    this.acceptedWeight += weight;
    if (this.acceptedWeight !== weight) return;
    setImmediate(() => {
      const accepted = this.acceptedWeight;
      this.acceptedWeight = 0;
      this.thread?.postMessage({ kind: 'accepted', weight: accepted });
    });
  }

  /** Runs `step` after everything received before it, unless the stream has ended; a failure ends it. */
  private then(step: () => unknown): void {
    this.chain = this.chain.then(() => (this.ended ? undefined : step())).catch((error: unknown) => this.end(error));
  }

  private end(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.settleConfirmations();
    const thread = this.thread;
    this.thread = undefined;
    void thread?.terminate().catch(() => undefined);
    this.config.onEnd(error instanceof Error ? error : new Error(errorText(error)));
  }

  /** Confirmations still on their way when the stream ends resolve as the main-thread reader's would after its end. */
  private settleConfirmations(): void {
    for (const waiting of this.confirmations.values()) waiting.resolve();
    this.confirmations.clear();
  }
}
