import type { StreamCommit } from '../../core/stream/stream-message';
import type { PgoutputReaderConfig } from '../pgoutput.reader';

/** Marks the workerData of the reader's thread, which alone runs the entry (pgoutput.worker.ts). */
export const READER_THREAD_MARK = 'nestOutboxWalReader';

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
  /** Commits in stream order (encodeCommits); `weight` is what the app's thread gives back once it took them all. */
  | { kind: 'commits'; commits: string; weight: number }
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

/**
 * Commits as one JSON text: a message's fields cross as one string copied whole, and the app's
 * thread reads them back with one JSON.parse, cheaper per message than reading back postMessage's
 * clone of the objects (BENCHMARKS.md, "The reader's thread"). Positions (bigints, which
 * JSON has not) cross as text, once per commit. Takes the commits over: their messages lose their
 * position, which decodeCommits gives back.
 */
export function encodeCommits(commits: StreamCommit[]): string {
  for (const commit of commits) for (const message of commit.messages) (message as { commit?: bigint }).commit = undefined;
  return JSON.stringify(commits.map((commit) => ({ ...commit, lsn: commit.lsn.toString() })));
}

export function decodeCommits(text: string): StreamCommit[] {
  const commits = JSON.parse(text) as Array<Omit<StreamCommit, 'lsn'> & { lsn: string }>;
  return commits.map((wire) => {
    const commit = wire as unknown as StreamCommit;
    commit.lsn = BigInt(wire.lsn);
    for (const message of commit.messages) message.commit = commit.lsn;
    return commit;
  });
}
