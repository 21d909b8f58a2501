import type { RelayActivity } from '../stats/outbox-stats';
import type { RelayObserver, RoundEnd } from './relay-observer';

/** Remembers when this instance's relay last finished a round, for stats, liveness gauges and health. */
export class RelayActivityTracker implements RelayObserver {
  private lastRoundAt: Date | null = null;
  private lastSuccessfulRoundAt: Date | null = null;
  running = false;

  constructor(private readonly now: () => number = Date.now) {}

  roundEnded(round: RoundEnd): void {
    const at = new Date(this.now());
    this.lastRoundAt = at;
    if (round.ok) this.lastSuccessfulRoundAt = at;
  }

  activity(): RelayActivity {
    return { running: this.running, lastRoundAt: this.lastRoundAt, lastSuccessfulRoundAt: this.lastSuccessfulRoundAt };
  }
}
