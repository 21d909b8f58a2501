import type { StreamCommit } from '../../core/stream/stream-message';
import type { PgoutputReaderConfig } from '../pgoutput.reader';

/** What the reader's thread is started with: the reader's settings without its callbacks, which stay on the app's thread. */
export interface ReaderThreadInit {
  reader: Omit<PgoutputReaderConfig, 'onCommit' | 'onCaughtUp' | 'onEnd'>;
  from?: bigint;
  /**
   * Messages (a commit without any counts as one) the reader's thread may hand over before the
   * app's thread has taken them: past it, the reader waits, and the server with it.
   */
  window: number;
}

/** From the reader's thread to the app's. */
export type FromReaderThread =
  /** Commits in stream order; `weight` is what the app's thread gives back once it took them all. */
  | { kind: 'commits'; commits: StreamCommit[]; weight: number }
  | { kind: 'caughtUp'; id: number; lsn: bigint }
  | { kind: 'confirmed'; id: number; error?: string }
  | { kind: 'end'; error: string }
  | { kind: 'stopped' };

/** From the app's thread to the reader's. */
export type ToReaderThread =
  | { kind: 'accepted'; weight: number }
  | { kind: 'caughtUpAnswer'; id: number; done: boolean }
  | { kind: 'confirm'; id: number; lsn: bigint }
  | { kind: 'stop' };

/** The end of a channel either side holds: a worker's `parentPort`, a `Worker`, or a `MessagePort`. */
export interface ReaderThreadPort<Out> {
  postMessage(message: Out): void;
}
