import { errorText } from '../../core/error-text';
import type { StreamCommit } from '../../core/stream/stream-message';
import type { PgoutputReaderConfig } from '../pgoutput.reader';
import type { WalReader } from '../wal-reader.port';
import { encodeCommits, type FromReaderThread, type ReaderThreadInit, type ReaderThreadPort, type ToReaderThread } from './reader-thread.protocol';

/**
 * The reader's side of `wal.readerThread: 'worker'`: runs the slot's reader on this thread and
 * hands its commits to the app's thread. Commits go over in groups (all those decoded before this
 * thread next turns to its event loop: one postMessage per network read rather than per commit),
 * and the reader goes on while the app's thread holds fewer than `window` messages it has not taken;
 * past that it waits, which holds the server back as the app's thread would. A keepalive's position
 * is asked about only behind every commit sent before it, so the app's thread never takes it for
 * caught up while a commit is still on its way.
 */
export class ReaderThreadHost {
  private readonly reader: WalReader;
  private pending: StreamCommit[] = [];
  private pendingWeight = 0;
  private flushScheduled = false;
  // Messages handed over and not yet taken by the app's thread, and the reader waiting for room.
  private outstanding = 0;
  private room: (() => void) | undefined;
  private nextId = 0;
  private readonly answers = new Map<number, (done: boolean) => void>();
  private ended = false;

  constructor(
    private readonly port: ReaderThreadPort<FromReaderThread>,
    private readonly init: ReaderThreadInit,
    makeReader: (config: PgoutputReaderConfig) => WalReader,
  ) {
    this.reader = makeReader({
      ...init.reader,
      onCommit: (commit) => this.handOver(commit),
      onCaughtUp: (lsn) => this.askCaughtUp(lsn),
      onEnd: (error) => this.end(error),
    });
  }

  start(): void {
    this.reader.start(this.init.from).catch((error: unknown) => this.end(error));
  }

  /** A message of the app's thread. */
  receive(message: ToReaderThread): void {
    switch (message.kind) {
      case 'accepted':
        this.outstanding -= message.weight;
        if (this.outstanding < this.init.window) this.wake();
        return;
      case 'caughtUpAnswer':
        this.answers.get(message.id)?.(message.done);
        this.answers.delete(message.id);
        return;
      case 'confirm':
        void this.reader.confirm(message.lsn).then(
          () => this.post({ kind: 'confirmed', id: message.id }),
          (error: unknown) => this.post({ kind: 'confirmed', id: message.id, error: errorText(error) }),
        );
        return;
      case 'stop':
        this.ended = true;
        this.wake();
        for (const answer of this.answers.values()) answer(false);
        this.answers.clear();
        void this.reader.stop().finally(() => this.post({ kind: 'stopped' }));
        return;
    }
  }

  private async handOver(commit: StreamCommit): Promise<void> {
    if (this.ended) return;
    const weight = Math.max(1, commit.messages.length);
    this.pending.push(commit);
    this.pendingWeight += weight;
    this.outstanding += weight;
    if (this.outstanding < this.init.window) return this.scheduleFlush();
    this.flush();
    while (!this.ended && this.outstanding >= this.init.window) await new Promise<void>((resume) => (this.room = resume));
  }

  private askCaughtUp(lsn: bigint): Promise<boolean> {
    if (this.ended) return Promise.resolve(false);
    this.flush();
    const id = this.nextId++;
    return new Promise<boolean>((resolve) => {
      this.answers.set(id, resolve);
      this.post({ kind: 'caughtUp', id, lsn });
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const commits = this.pending;
    const weight = this.pendingWeight;
    this.pending = [];
    this.pendingWeight = 0;
    this.post({ kind: 'commits', commits: encodeCommits(commits), weight });
  }

  private wake(): void {
    const room = this.room;
    this.room = undefined;
    room?.();
  }

  private end(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.wake();
    // What was decoded goes over first; the app's thread decides what becomes of it.
    this.flush();
    this.post({ kind: 'end', error: errorText(error) });
  }

  private post(message: FromReaderThread): void {
    this.port.postMessage(message);
  }
}
