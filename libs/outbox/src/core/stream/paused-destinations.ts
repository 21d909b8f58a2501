import type { StreamCommit, StreamMessage } from './stream-message';

// While something is paused, the table is read again at most this often to learn of resumes.
const RESUME_CHECK_MS = 1_000;

/**
 * Which destinations the stream holds back, decided per message when its commit is read: a pause
 * (a row of `<table>_paused`, which the publication carries) reaches the stream in commit order, so
 * exactly the messages committed after it are held, as the table relay's claims would skip their
 * rows. A resume deletes the row, which the publication does not carry (it carries inserts and
 * updates, for the outbox table's sake): the stream learns of it by reading the table again, at
 * most once a second while something is paused. Until then held messages still go to the table,
 * whose relay publishes them, so a late resume only costs a detour, never order or a message.
 */
export class PausedDestinations {
  private paused = new Set<string>();
  private readonly held = new WeakSet<StreamMessage>();
  private loadedAt: number | undefined;

  constructor(
    private readonly read: () => Promise<string[]>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes a commit's pauses, then marks its messages to held destinations. In stream order. */
  accept(commit: StreamCommit): void {
    for (const destination of commit.paused ?? []) this.paused.add(destination);
    if (this.paused.size === 0) return;
    for (const message of commit.messages) if (this.paused.has(message.destination)) this.held.add(message);
  }

  /** Whether the message's destination was paused when its commit was read. */
  holds(message: StreamMessage): boolean {
    return this.held.has(message);
  }

  /**
   * Reads the table at start, and again while something is paused (for resumes); throws when the
   * table cannot be read. Called between commits (never while one is taken), so the set read
   * replaces the one held: a pause committed after the read reaches `accept` later.
   */
  async refresh(): Promise<void> {
    const due = this.loadedAt === undefined || (this.paused.size > 0 && this.now() - this.loadedAt >= RESUME_CHECK_MS);
    if (!due) return;
    const readAt = this.now();
    this.paused = new Set(await this.read());
    this.loadedAt = readAt;
  }
}
