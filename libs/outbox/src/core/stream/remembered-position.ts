import { errorText } from '../error-text';
import { formatLsn } from './stream-message';
import type { PublishedCount, StreamPositionStore } from './stream-position.port';

/**
 * Saves the stream's acknowledged positions without holding the stream up: at most one write is
 * in flight, and positions that arrive meanwhile collapse into the newest one, written next. So
 * the cost is one short transaction per acknowledged batch at most, fewer when batches come faster
 * than the database commits. A failed write is not retried on its own: the next position covers
 * it, and losing one only means replaying the batches since the last saved position.
 */
export class RememberedPosition {
  private writing: Promise<void> | undefined;
  private next: bigint | undefined;
  private failures = 0;
  // Published since the last save, by transport and destination; a failed save keeps them for the next.
  private counts = new Map<string, PublishedCount>();

  constructor(
    private readonly store: StreamPositionStore,
    private readonly logger: { warn(message: string): void },
  ) {}

  /** The position saved last (where a new stream starts), or `undefined`. */
  read(): Promise<bigint | undefined> {
    return this.store.read();
  }

  /** Counts messages the broker acknowledged; saved with the next position. */
  published(messages: ReadonlyArray<{ transport: string; destination: string }>): void {
    for (const { transport, destination } of messages) this.add(transport, destination, 1);
  }

  private add(transport: string, destination: string, count: number): void {
    const key = `${transport}\u0000${destination}`;
    const entry = this.counts.get(key);
    if (entry) entry.count += count;
    else this.counts.set(key, { transport, destination, count });
  }

  /** Queues a position to be saved; returns at once. */
  remember(lsn: bigint): void {
    if (this.next === undefined || lsn > this.next) this.next = lsn;
    this.writing ??= this.writeQueued();
  }

  /** Resolves once every position remembered so far has been written (or its write failed). */
  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeQueued(): Promise<void> {
    try {
      while (this.next !== undefined) {
        const lsn = this.next;
        this.next = undefined;
        const counts = this.counts;
        this.counts = new Map();
        try {
          await this.store.save(lsn, [...counts.values()]);
          this.failures = 0;
        } catch (error) {
          for (const { transport, destination, count } of counts.values()) this.add(transport, destination, count);
          // Said once per run of failures (the database may be restarting): not once per batch.
          if (this.failures++ === 0) this.logger.warn(`Outbox WAL relay: saving the stream's position ${formatLsn(lsn)} failed (${errorText(error)}); a restart may replay the batches since the last saved one.`);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
