import { errorText } from '../../core/error-text';
import type { RelayObserver, RoundEnd, SettledBatch } from '../../core/observe/relay-observer';

/** Why an open tenant's relay is not getting through its rounds, and since when. */
export interface TenantRelayFailure {
  /** The latest failed claim or settle: a database that refused, or a statement past `queryTimeoutMs`. */
  error: string;
  /** The first failure since the relay last completed a round. */
  since: Date;
}

/**
 * Follows one tenant's relay for `status()`: a claim or settle that fails (or times out) marks the
 * tenant's relay as failing, and the next round that reaches its database both ways clears it. Failed
 * publishes do not count: they are the broker's, retried per row, and shared by every tenant.
 */
export class TenantRelayFailureTracker implements RelayObserver {
  private failure?: TenantRelayFailure;

  constructor(private readonly now: () => number = Date.now) {}

  claimFailed(_relayId: string, error: unknown): void {
    this.failed(errorText(error));
  }

  settled(batch: SettledBatch): void {
    if (batch.settleError !== undefined) this.failed(batch.settleError);
  }

  roundEnded(round: RoundEnd): void {
    if (round.completed) this.failure = undefined;
  }

  current(): TenantRelayFailure | undefined {
    return this.failure && { ...this.failure };
  }

  private failed(error: string): void {
    this.failure = { error, since: this.failure?.since ?? new Date(this.now()) };
  }
}
