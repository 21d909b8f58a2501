export interface BackoffOptions {
  /** Delay before the second attempt. */
  initialMs: number;
  /** Upper bound of any delay. */
  maxMs: number;
  /** Share of each delay that is randomized (0 = none, 1 = anywhere between 0 and the delay). */
  jitter: number;
}

/**
 * Exponential backoff with jitter. Jitter spreads retries of many rows that failed together
 * (a broker outage) so that they do not all hit the broker again in the same instant.
 */
export class RetryPolicy {
  constructor(
    private readonly maxAttempts: number,
    private readonly backoff: BackoffOptions,
    private readonly random: () => number = Math.random,
  ) {}

  /** The attempts a row may use; a row claimed more often is dead-lettered unpublished. */
  get attemptLimit(): number {
    return this.maxAttempts;
  }

  /** Milliseconds until the next try after `attempt` failed, or `null` when the row is dead. */
  delayAfter(attempt: number): number | null {
    if (attempt >= this.maxAttempts) return null;
    const exponential = this.backoff.initialMs * 2 ** (attempt - 1);
    const capped = Math.min(this.backoff.maxMs, exponential);
    const randomized = capped * (1 - this.backoff.jitter * this.random());
    return Math.max(0, Math.round(randomized));
  }
}
