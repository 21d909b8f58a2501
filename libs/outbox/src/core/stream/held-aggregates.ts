import type { StreamMessage } from './stream-message';
import { aggregateOf, type StreamOverflow } from './stream-overflow.port';

/** Held aggregates the stream keeps in memory; past this many it asks the table per batch instead. */
export const HELD_AGGREGATES_CACHED = 10_000;
/** Batches asked one by one, while the table holds too many aggregates, before the set is read again. */
const BATCHES_BEFORE_RELOAD = 100;

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
 */
export class HeldAggregates {
  // undefined: unknown (at start, and after a commit that wrote the table).
  private known: Set<string> | undefined;
  private changes = 0;
  // `changes` when the previous batch was checked: equal when no write came in between.
  private checkedAt = 0;
  // While the table holds more than `limit` aggregates: batches left before the set is read again.
  private askEach = 0;

  constructor(
    private readonly table: Pick<StreamOverflow, 'held' | 'backlogged'>,
    private readonly limit = HELD_AGGREGATES_CACHED,
  ) {}

  /** A commit wrote an outbox row that may hold an aggregate (any aggregate): read the set again. */
  tableWritten(): void {
    this.changes++;
    this.known = undefined;
  }

  /** The stream moved messages of these aggregates to the table (committed). */
  diverted(aggregates: Iterable<Aggregate>): void {
    for (const aggregate of aggregates) this.known?.add(aggregateOf(aggregate));
  }

  /** Of the batch's aggregates (`aggregateOf`), those with rows in the table that its messages must wait behind. */
  async heldOf(batch: ReadonlyArray<Aggregate>): Promise<Set<string>> {
    const changes = this.changes;
    const quiet = changes === this.checkedAt;
    this.checkedAt = changes;
    if (this.known === undefined) {
      if (quiet && this.askEach === 0) {
        const read = await this.table.held(this.limit);
        if (read.complete) {
          if (changes === this.changes) this.known = read.aggregates;
          return new Set(batch.map(aggregateOf).filter((key) => read.aggregates.has(key)));
        }
        this.askEach = BATCHES_BEFORE_RELOAD;
      }
      if (this.askEach > 0) this.askEach--;
      const backlog = await this.table.backlogged(batch);
      if (!backlog.any && changes === this.changes) (this.known = new Set()), (this.askEach = 0);
      return backlog.aggregates;
    }
    const known = this.known;
    const touched = batch.filter((message) => known.has(aggregateOf(message)));
    if (touched.length === 0) return new Set();
    // Held when last read: they may have drained since (the table relay published them, a delete).
    const backlog = await this.table.backlogged(touched);
    if (changes === this.changes) for (const message of touched) if (!backlog.aggregates.has(aggregateOf(message))) known.delete(aggregateOf(message));
    return backlog.aggregates;
  }
}
