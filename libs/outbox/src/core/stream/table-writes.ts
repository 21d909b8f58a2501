import type { StreamCommit } from './stream-message';
import type { TableReadContext } from './stream-overflow.port';

/** Insert-only commits remembered at most; past this the oldest are forgotten (their rows then hold every message, as unknown ones do). */
export const INSERTS_REMEMBERED = 10_000;

/**
 * The commits that wrote the outbox table, as the stream decoded them, for its reads of the table:
 *
 * - Visibility. PostgreSQL flushes a commit record (and the WAL sender may decode and send it) a
 *   moment before the committing backend becomes visible to other snapshots. A read of the table
 *   right after such a commit may not see its rows yet; so every table-writing transaction decoded
 *   since the last read that saw them all must be visible to the next read (`mustSee`).
 * - Position. A row inserted by a commit the stream decoded AFTER a message's commit is later in
 *   commit order than that message and must not hold it: `inserts` maps the transaction ids of
 *   commits that only inserted rows to their commit positions. A commit that updated a row to a
 *   holding status is not kept: the row's `xmin` then names the update, not the insert, and the row
 *   may be older than that commit. Whatever is not here (forgotten, never decoded) holds as before.
 */
export class TableWrites {
  private readonly unseen = new Set<number>();
  // Insertion order is commit order: the oldest come first.
  private readonly inserted = new Map<number, bigint>();

  constructor(private readonly remembered = INSERTS_REMEMBERED) {}

  /** A commit reached the stream (in commit order). */
  committed(commit: Pick<StreamCommit, 'lsn' | 'wroteTable' | 'xid' | 'updatedRows'>): void {
    if (!commit.wroteTable || commit.xid === undefined) return;
    this.unseen.add(commit.xid);
    if (commit.updatedRows) return;
    this.inserted.delete(commit.xid);
    this.inserted.set(commit.xid, commit.lsn);
    if (this.inserted.size > this.remembered) this.inserted.delete(this.inserted.keys().next().value!);
  }

  /** What the next read must see, and the insert-only commits it may place rows by. */
  context(): TableReadContext {
    return { mustSee: [...this.unseen], inserts: this.inserted };
  }

  /** Table-writing commits no read has seen yet. */
  get unseenCount(): number {
    return this.unseen.size;
  }

  /** A read saw these commits: later reads (later snapshots) see them too. */
  seen(xids: readonly number[]): void {
    for (const xid of xids) this.unseen.delete(xid);
  }

  /**
   * No message committed before `lsn` is left to check: a row inserted before it holds every
   * message still to come, which is what an unknown row does, so it need not be remembered.
   */
  forgetBefore(lsn: bigint): void {
    for (const [xid, at] of this.inserted) {
      if (at >= lsn) break;
      this.inserted.delete(xid);
    }
  }
}
