import type { RoundTurns } from './round-turns';

/** What the rounds need of the relay: a claim, the delivery of a claimed batch, and whether it stopped. */
export interface RoundsHost<Batch extends { messages: readonly unknown[] }> {
  stopped(): boolean;
  /** Leases the next batch; `undefined` when nothing is claimable (or the claim failed). */
  claim(): Promise<Batch | undefined>;
  /** Publishes and settles a batch; with `chain`, the settle may carry the next claim, whose batch comes back as `next`. */
  deliver(batch: Batch, chain: boolean): Promise<{ next?: Batch; settledWithClaim: boolean }>;
}

/** What the rounds of one drain pass tell each other. */
interface DrainProgress {
  /** Claims under way (or waiting for a turn). */
  claiming: number;
  /**
   * Batches settled on their own, each of which may have unblocked rows that no claim has looked
   * at yet (a settle that carried a claim is not counted: that claim saw what it unblocked).
   */
  settledBatches: number;
  /** The last claim filled its batch: more rows are likely waiting, so claims may overlap. */
  backlog: boolean;
  /** `settledBatches` when the latest empty claim began: no claim until another batch settles. */
  emptyAfter: number | undefined;
}

/**
 * The relay's drain: rounds (claim → publish → settle) while fewer than `maxBatchesInFlight` are
 * under way, a claim counting as one. The next claim starts as soon as there is room, each on its
 * own pooled connection as a second relay's would, so claims overlap each other and the publish and
 * settle of earlier batches. Order per aggregate needs nothing more: a claim never takes rows of an
 * aggregate whose first unpublished row is leased, or locked by a claim under way (SKIP LOCKED), so
 * a key's rows are in at most one unsettled batch, as with several relays. SQLite has one writer:
 * each claim is one atomic statement and the database runs them one after another, so there they
 * queue rather than overlap, which keeps the same rule without a relay-side lock.
 *
 * While nothing shows a backlog (the first claim of a drain, or the last claim came back short of a
 * full batch) one claim runs at a time, so that a poll of a quiet table costs one claim, not
 * `maxBatchesInFlight`. An empty claim while other rounds run is tried again once a batch settles,
 * since its rows may unblock their aggregates.
 */
export class RelayRounds<Batch extends { messages: readonly unknown[] }> {
  private passRequested = false;

  constructor(
    private readonly config: { batchSize: number; maxBatchesInFlight?: number; turns?: RoundTurns },
    private readonly host: RoundsHost<Batch>,
  ) {}

  /** A drain under way runs one more pass once it finds nothing: what was committed meanwhile is claimed then. */
  requestPass(): void {
    this.passRequested = true;
  }

  /** Runs rounds until a pass finds nothing claimable (or the relay stops), then waits for those under way. */
  async drain(): Promise<void> {
    const limit = this.config.maxBatchesInFlight ?? 1;
    const rounds = new Set<Promise<void>>();
    const progress: DrainProgress = { claiming: 0, settledBatches: 0, backlog: false, emptyAfter: undefined };
    let wake: () => void = () => undefined;
    const mayClaim = () =>
      !this.host.stopped() &&
      rounds.size < limit &&
      progress.emptyAfter !== progress.settledBatches &&
      (progress.claiming === 0 || progress.backlog);
    try {
      do {
        this.passRequested = false;
        progress.emptyAfter = undefined;
        for (;;) {
          while (mayClaim()) {
            const round: Promise<void> = this.round(progress, () => wake()).finally(() => {
              rounds.delete(round);
              wake();
            });
            rounds.add(round);
          }
          // Nothing under way and no claim allowed: the last claim was empty and nothing settled since it began.
          if (rounds.size === 0) break;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      } while (!this.host.stopped() && this.passRequested);
    } finally {
      await Promise.allSettled(rounds);
    }
  }

  /** One claim → publish → settle (and the claims chained to its settles), taking a turn first when turns are shared; `changed` is called when a claim returned or a batch settled. */
  private async round(progress: DrainProgress, changed: () => void): Promise<void> {
    const settledBeforeClaim = progress.settledBatches;
    progress.claiming += 1;
    const giveBack = this.config.turns ? await this.config.turns.take() : undefined;
    const batch = this.host.stopped() ? undefined : await this.host.claim();
    progress.claiming -= 1;
    if (!batch) {
      giveBack?.();
      // A batch that settled while this claim ran may have unblocked rows: then claim again at once.
      progress.emptyAfter = Math.max(progress.emptyAfter ?? -1, settledBeforeClaim);
      progress.backlog = false;
      return changed();
    }
    changed();
    try {
      // With a backlog (and no turns to take first), each settle carries the next claim: a busy
      // aggregate's next run is leased as its previous one is marked published.
      for (let current: Batch | undefined = batch; current; ) {
        progress.backlog = current.messages.length >= this.config.batchSize;
        const { next, settledWithClaim } = await this.host.deliver(current, progress.backlog && !this.config.turns);
        // A settle that carried a claim had that claim look at what it unblocked: others need not.
        if (!settledWithClaim) progress.settledBatches += 1;
        changed();
        current = next;
      }
    } finally {
      giveBack?.();
    }
  }
}
