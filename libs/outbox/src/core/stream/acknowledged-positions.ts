import type { StreamCommit, StreamMessage } from './stream-message';

interface OpenCommit {
  lsn: bigint;
  remaining: number;
  carried: boolean;
  receivedAt: number;
}

/**
 * Which stream position may be confirmed to the server: the end of the last commit whose
 * messages, and those of every commit before it, the broker has all acknowledged. Confirming any
 * further would let the server forget a message not yet published; a restart replays from here.
 */
export class AcknowledgedPositions {
  // Commits received and not yet wholly acknowledged, oldest first, with their unacknowledged counts.
  private readonly open: Array<OpenCommit> = [];
  private readonly byLsn = new Map<bigint, OpenCommit>();
  private confirmedUpTo: bigint | undefined;
  private carriedMessages = false;

  /** Commits must arrive in stream (commit) order. */
  received(commit: StreamCommit, now = Date.now()): void {
    const entry = { lsn: commit.lsn, remaining: commit.messages.length, carried: commit.messages.length > 0, receivedAt: now };
    this.open.push(entry);
    this.byLsn.set(commit.lsn, entry);
  }

  acknowledged(messages: readonly Pick<StreamMessage, 'commit'>[]): void {
    for (const message of messages) {
      const entry = this.byLsn.get(message.commit);
      if (!entry || entry.remaining === 0) throw new Error(`acknowledged a message of commit ${message.commit} that is not open`);
      entry.remaining--;
    }
  }

  /** When the oldest commit with messages not yet acknowledged was received (ms since the epoch); `undefined` when none waits. */
  get oldestWaitingSince(): number | undefined {
    return this.open.find((entry) => entry.remaining > 0)?.receivedAt;
  }

  /** True when every commit received has been acknowledged in full. */
  get settled(): boolean {
    return this.open.every((entry) => entry.remaining === 0);
  }

  /** The newly confirmable position, or `undefined` when it has not moved since the last call. */
  advance(): bigint | undefined {
    let moved: bigint | undefined;
    let carried = false;
    while (this.open.length > 0 && this.open[0].remaining === 0) {
      const done = this.open.shift()!;
      this.byLsn.delete(done.lsn);
      moved = done.lsn;
      carried ||= done.carried;
    }
    if (moved !== undefined) (this.confirmedUpTo = moved), (this.carriedMessages = carried);
    return moved;
  }

  /** Whether the commits the last `advance` moved past carried outbox messages (not only keepalives and other tables' commits). */
  get lastAdvanceCarriedMessages(): boolean {
    return this.carriedMessages;
  }

  /** The last position returned by `advance`. */
  get confirmed(): bigint | undefined {
    return this.confirmedUpTo;
  }
}
