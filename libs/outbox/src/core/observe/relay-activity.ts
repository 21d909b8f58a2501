import type { RelayActivity } from '../stats/outbox-stats';
import type { RelayObserver, RoundEnd } from './relay-observer';

/**
 * Remembers when this instance's relay last finished a round, for stats, liveness gauges and health.
 * A round whose claim or settle failed is not finished: while the database is away the relay does
 * nothing, and the stalled-relay check and gauge must see it standing still.
 */
export class RelayActivityTracker implements RelayObserver {
  private lastRoundAt: Date | null = null;
  private lastSuccessfulRoundAt: Date | null = null;
  running = false;

  constructor(private readonly now: () => number = Date.now) {}

  roundEnded(round: RoundEnd): void {
    if (!round.completed) return;
    const at = new Date(this.now());
    this.lastRoundAt = at;
    if (round.ok) this.lastSuccessfulRoundAt = at;
  }

  activity(): RelayActivity {
    return { running: this.running, lastRoundAt: this.lastRoundAt, lastSuccessfulRoundAt: this.lastSuccessfulRoundAt };
  }
}
