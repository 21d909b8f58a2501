import { randomUUID } from 'node:crypto';
import { ConsoleError } from '../console/console.error';
import { nameProblem } from '../names';
import { REPLAY_HEADERS, type ReplayFilter, type ReplayHold, type ReplayStore } from './replay.port';
import { replayBadBy, replayEmptyTimeRange, replayNeedsFilter, replayNeedsReason, replayNoSuchMessage, replayNotPublished, walKeepsNoRows, walRowsOnly } from './replay.messages';

/** What an operator asks to replay, and why. */
export interface ReplayRequest {
  filter: ReplayFilter;
  /** Why; required. Stored on every replayed message and sent with it (`outbox-replay-reason`). */
  reason: string;
  /** Who asks (`outbox-replayed-by`). Default `'unknown'`. */
  by?: string;
  /** Replay every published message the table keeps, with no filter. Default `false`: refused. */
  all?: boolean;
  /** Only count. Default `false`. */
  dryRun?: boolean;
}

export interface ReplayOutcome {
  /** Published messages the filter matched. */
  matched: number;
  /** Messages made pending again (0 on a dry run). */
  replayed: number;
  /** Of those, still held when the replay returned, because a newer message of their aggregate was in flight (see `heldUntil`). */
  waiting: number;
  dryRun: boolean;
  /** The replay's id and time, as the `outbox-replay-id` / `outbox-replayed-at` headers carry them; `null` on a dry run. */
  replayId: string | null;
  replayedAt: string | null;
  /** When held messages go out at the latest, should the release not finish. */
  heldUntil: string | null;
  /** Set when the table is streamed through the WAL mode: what it streamed has no row and is not replayed. */
  note: string | null;
}

export interface ReplayTiming {
  /** Rows per statement. Default 200. */
  batchSize: number;
  /** How long the rows of a replay hold their aggregates at most (a crashed replay's rows go out after it). Default 5 minutes. */
  holdMs: number;
  /** How long the replay waits for in-flight messages of its aggregates before it returns. Default 30 s. */
  releaseWaitMs: number;
  /** Pause between two release passes while some rows wait. Default 100 ms. */
  releasePollMs: number;
}

export const REPLAY_TIMING: ReplayTiming = { batchSize: 200, holdMs: 300_000, releaseWaitMs: 30_000, releasePollMs: 100 };

const MAX_REASON = 500;

/**
 * Re-publishes messages the outbox already published and still keeps, in place: each row becomes
 * pending again with its own id, position, destination and payload, so the relay sends it as it did
 * the first time, in position order per aggregate and destination.
 *
 * Two steps keep that order while other messages keep flowing. First every matching row is taken in
 * position order and held (a lease of the replay's, see ReplayHold): a held row is its aggregate's first
 * unpublished row, so newer pending rows of that aggregate wait behind it. Then the holds are released,
 * again in position order, except on aggregates where a relay holds a newer row in flight (claimed
 * before the replay): those rows wait until it is published, so that the in-flight one does not race
 * them. A replayed row therefore goes out after what was already on its way, and before everything of
 * its aggregate that was still waiting.
 */
export class OutboxReplay {
  private readonly timing: ReplayTiming;

  constructor(
    private readonly store: ReplayStore,
    timing: Partial<ReplayTiming> = {},
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    this.timing = { ...REPLAY_TIMING, ...timing };
  }

  async replay(request: ReplayRequest): Promise<ReplayOutcome> {
    const { filter, reason, by } = checked(request);
    const matched = await this.store.countPublished(filter);
    const streamed = await this.store.streamedMessagesExist();
    if (matched === 0 && filter.id !== undefined) await this.explainMissing(filter.id);
    if (matched === 0 && streamed) throw new ConsoleError(walKeepsNoRows(), 'conflict', 'delivery');
    const note = streamed ? walRowsOnly(request.dryRun === true) : null;
    if (request.dryRun || matched === 0) {
      return { matched, replayed: 0, waiting: 0, dryRun: request.dryRun === true, replayId: null, replayedAt: null, heldUntil: null, note };
    }
    const replayId = randomUUID();
    const replayedAt = new Date(this.now()).toISOString();
    const hold: ReplayHold = {
      owner: `replay:${replayId}`,
      replayId,
      holdMs: this.timing.holdMs,
      headers: { [REPLAY_HEADERS.replayedAt]: replayedAt, [REPLAY_HEADERS.reason]: reason, [REPLAY_HEADERS.by]: by, [REPLAY_HEADERS.replayId]: replayId },
    };
    const replayed = await this.walk((after) => this.store.holdBatch(filter, hold, after, this.timing.batchSize));
    // The last row taken holds the longest.
    const heldUntil = new Date(this.now() + this.timing.holdMs).toISOString();
    const waiting = await this.release(hold.owner);
    return { matched, replayed, waiting, dryRun: false, replayId, replayedAt, heldUntil, note };
  }

  // One message asked for by id: say why it is not replayed rather than answer "0 matched".
  private async explainMissing(id: string): Promise<void> {
    const status = await this.store.statusOf(id);
    if (status === undefined) throw new ConsoleError(replayNoSuchMessage(id), 'not-found');
    if (status !== 'published') throw new ConsoleError(replayNotPublished(id, status), 'conflict');
  }

  // Release passes until every row is out or the wait is over; what still waits goes out when its
  // in-flight neighbour is published and, at the latest, when the hold expires.
  private async release(owner: string): Promise<number> {
    const deadline = this.now() + this.timing.releaseWaitMs;
    for (;;) {
      await this.walk((after) => this.store.releaseBatch(owner, after, this.timing.batchSize));
      const held = await this.store.countHeld(owner);
      if (held === 0 || this.now() >= deadline) return held;
      await this.sleep(this.timing.releasePollMs);
    }
  }

  // Walks forward by position, so it ends whatever happens behind it.
  private async walk(batch: (after: string) => Promise<string[]>): Promise<number> {
    let changed = 0;
    let after = '0';
    for (;;) {
      const positions = await batch(after);
      changed += positions.length;
      if (positions.length < this.timing.batchSize) return changed;
      after = positions.reduce((max, position) => (BigInt(position) > BigInt(max) ? position : max));
    }
  }
}

function checked(request: ReplayRequest): { filter: ReplayFilter; reason: string; by: string } {
  const reason = typeof request.reason === 'string' ? request.reason.trim() : '';
  if (nameProblem(reason, MAX_REASON)) throw new ConsoleError(replayNeedsReason(), 'invalid', 'reason');
  const by = request.by === undefined ? 'unknown' : request.by.trim();
  if (nameProblem(by)) throw new ConsoleError(replayBadBy(), 'invalid', 'by');
  const { type, aggregateType, aggregateId, destination, id, from, to } = request.filter;
  const filter: ReplayFilter = { type, aggregateType, aggregateId, destination, id, from, to };
  if (from && to && from.getTime() >= to.getTime()) throw new ConsoleError(replayEmptyTimeRange(from, to), 'invalid', 'to');
  const narrowed = Object.values(filter).some((value) => value !== undefined);
  if (!narrowed && request.all !== true) throw new ConsoleError(replayNeedsFilter(), 'invalid', 'filter');
  return { filter, reason, by };
}
