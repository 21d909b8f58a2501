import type { StreamCommit, StreamMessage } from './stream-message';
import { aggregateOf, type StreamOverflow, type TableReadAnswer, type TableReadContext } from './stream-overflow.port';
import { walCommitNotVisible } from './stream.messages';
import { TableWrites } from './table-writes';

/** Held aggregates the stream keeps in memory; past this many it asks the table per batch instead. */
export const HELD_AGGREGATES_CACHED = 10_000;
/** Batches asked one by one, while the table holds too many aggregates, before the set is read again. */
const BATCHES_BEFORE_RELOAD = 100;

/** How a read waits for a decoded commit to become visible: a few ms at most, normally (see TableWrites). */
export interface VisibilityWait {
  retryMs: number;
  timeoutMs: number;
}
const VISIBILITY_WAIT: VisibilityWait = { retryMs: 1, timeoutMs: 5_000 };
/** Decoded table-writing commits past which a read is made only to see them, while no batch reads. */
export const UNSEEN_COMMITS_CHECKED = 1_000;

type Aggregate = Pick<StreamMessage, 'aggregateType' | 'aggregateId'>;

/**
 * The aggregates the outbox table holds (pending rows, and dead ones under 'hold'), read once and
 * then kept in memory, so that a dead row held for days does not cost the stream a query per batch.
 *
 * The set only grows through a commit that writes a row which may hold an aggregate, and every such
 * commit reaches the stream (the publication carries the table's inserts and updates, whichever
 * instance, console, CLI or admin call wrote them) before the messages committed after it:
 * `tableWritten` drops the set and the next batch reads it again. Rows the stream moves to the
 * table itself are added at once (`diverted`). A read that a `tableWritten` overtook answers for
 * the batch it was made for (the rows that precede that batch were committed before it), but is
 * not kept. An aggregate is never missing from the set, then; one that drained (published, deleted)
 * stays in it until a batch carries its messages, which asks the table about those aggregates only.
 *
 * While the table keeps being written between batches (the table relay claiming and settling rows
 * left from the table mode, retries), a set read now would be dropped before it served a batch:
 * each batch then asks about its own aggregates only, and the set is read again once a batch comes
 * with no write since the one before.
 *
 * Every read must see the table-writing commits the stream decoded before it (`TableWrites`): one
 * that does not yet is made again after `retryMs`. An aggregate whose rows were all inserted by
 * commits the stream decoded is held only from the earliest of those commits (`heldOf` answers
 * that position; 0 when it holds every message).
 */
export class HeldAggregates {
  // undefined: unknown (at start, and after a commit that wrote the table). Aggregate → held from.
  private known: Map<string, bigint> | undefined;
  private changes = 0;
  // `changes` when the previous batch was checked: equal when no write came in between.
  private checkedAt = 0;
  // While the table holds more than `limit` aggregates: batches left before the set is read again.
  private askEach = 0;

  constructor(
    private readonly table: Pick<StreamOverflow, 'held' | 'backlogged'>,
    private readonly limit = HELD_AGGREGATES_CACHED,
    private readonly wait: VisibilityWait = VISIBILITY_WAIT,
    private readonly writes = new TableWrites(),
  ) {}

  /** A commit wrote an outbox row that may hold an aggregate (any aggregate): read the set again. */
  tableWritten(commit?: Pick<StreamCommit, 'lsn' | 'wroteTable' | 'xid' | 'updatedRows'>): void {
    this.changes++;
    this.known = undefined;
    if (commit) this.writes.committed(commit);
  }

  /**
   * While no batch reads the table (no outbox traffic on the stream) and the table keeps being
   * written (the table relay retrying rows), the commits the next read must see pile up: past
   * UNSEEN_COMMITS_CHECKED, one read sees them, so that no read carries an unbounded list. A failed
   * read only leaves them for the next one.
   */
  async seeDecodedCommits(): Promise<void> {
    if (this.writes.unseenCount <= UNSEEN_COMMITS_CHECKED) return;
    await this.read((context) => this.table.backlogged([], context)).catch(() => undefined);
  }

  /** No message committed before `lsn` is left to check. */
  checkedUpTo(lsn: bigint): void {
    this.writes.forgetBefore(lsn);
  }

  /** The stream moved messages of these aggregates to the table (committed): they hold every later message. */
  diverted(aggregates: Iterable<Aggregate>): void {
    for (const aggregate of aggregates) this.known?.set(aggregateOf(aggregate), 0n);
  }

  /**
   * Of the batch's aggregates (`aggregateOf`), those with rows in the table that its messages must
   * wait behind, each with the commit position from which its rows hold (0: every message).
   */
  async heldOf(batch: ReadonlyArray<Aggregate>): Promise<Map<string, bigint>> {
    const changes = this.changes;
    const quiet = changes === this.checkedAt;
    this.checkedAt = changes;
    if (this.known === undefined) {
      if (quiet && this.askEach === 0) {
        const read = await this.read((context) => this.table.held(this.limit, context));
        const all = placed(read.aggregates, read);
        if (read.complete) {
          if (changes === this.changes) this.known = all;
          return new Map(batch.map(aggregateOf).flatMap((key) => (all.has(key) ? [[key, all.get(key)!]] : [])));
        }
        this.askEach = BATCHES_BEFORE_RELOAD;
      }
      if (this.askEach > 0) this.askEach--;
      const backlog = await this.read((context) => this.table.backlogged(batch, context));
      if (!backlog.any && changes === this.changes) (this.known = new Map()), (this.askEach = 0);
      return placed(backlog.aggregates, backlog);
    }
    const known = this.known;
    const touched = batch.filter((message) => known.has(aggregateOf(message)));
    if (touched.length === 0) return new Map();
    // Held when last read: they may have drained since (the table relay published them, a delete).
    const backlog = await this.read((context) => this.table.backlogged(touched, context));
    const answer = placed(backlog.aggregates, backlog);
    if (changes === this.changes) {
      for (const message of touched) {
        const key = aggregateOf(message);
        if (answer.has(key)) known.set(key, answer.get(key)!);
        else known.delete(key);
      }
    }
    return answer;
  }

  /** Reads until the read's snapshot sees every table-writing commit decoded before it. */
  private async read<T extends TableReadAnswer>(ask: (context: TableReadContext) => Promise<T>): Promise<T> {
    const context = this.writes.context();
    const started = Date.now();
    for (;;) {
      const answer = await ask(context);
      if (answer.visible !== false) {
        this.writes.seen(context.mustSee);
        return answer;
      }
      const waited = Date.now() - started;
      if (waited >= this.wait.timeoutMs) throw new Error(walCommitNotVisible(context.mustSee, waited));
      await new Promise((resume) => setTimeout(resume, this.wait.retryMs));
    }
  }
}

/** The held aggregates with the position each holds from (0 unless the answer places it). */
function placed(aggregates: Set<string>, answer: TableReadAnswer): Map<string, bigint> {
  return new Map([...aggregates].map((key) => [key, answer.heldFrom?.get(key) ?? 0n]));
}
