/** Most delayed rows remembered at once; past that, later ones are found by the poll. */
const MAX_PENDING = 10_000;

/**
 * Wakes the relay when rows come due — delayed rows written by this process, retries of its own
 * failed publishes — instead of leaving them to the next poll (up to `pollIntervalMs` late). Best
 * effort: rows of other processes, or of a transaction that commits after the time, are still found
 * by polling.
 */
export class DelayedWakeUps {
  private readonly due: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  constructor(
    private readonly wake: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** A row becomes claimable in `delayMs`. */
  schedule(delayMs: number): void {
    if (this.stopped || this.due.length >= MAX_PENDING) return;
    // A few milliseconds late on purpose: the database's clock decides, and may be a little behind
    // ours, and a timer may fire while Date.now() is a millisecond short; a claim then would find the
    // row not yet due, and nothing would wake the relay again before the next poll.
    const at = this.now() + delayMs + 5;
    const index = this.due.findIndex((time) => time > at);
    this.due.splice(index === -1 ? this.due.length : index, 0, at);
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.due.length = 0;
  }

  private arm(): void {
    const next = this.due[0];
    if (next === undefined || next >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(() => this.fire(), Math.max(0, next - this.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    while (this.due.length > 0 && this.due[0] <= now) this.due.shift();
    if (!this.stopped) this.wake();
    this.arm();
  }
}
