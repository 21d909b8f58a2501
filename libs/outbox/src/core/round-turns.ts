/**
 * Rounds (claim → publish → settle) shared between relays, at most `limit` at once, handed out in
 * the order they were asked for: relays of many databases (one per tenant) take turns, so a tenant
 * with a large backlog gets one round in its turn like every other, and one whose database does
 * not answer holds at most one of the turns until its statement times out.
 */
export class RoundTurns {
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`RoundTurns: limit must be a positive integer, got ${String(limit)}`);
  }

  /** Resolves with the function that gives the turn back, once one is free. */
  take(): Promise<() => void> {
    return new Promise((granted) => {
      const grant = () => {
        this.running += 1;
        let given = false;
        granted(() => {
          if (given) return;
          given = true;
          this.running -= 1;
          this.queue.shift()?.();
        });
      };
      if (this.running < this.limit) grant();
      else this.queue.push(grant);
    });
  }

  /** Rounds running now and relays waiting for one. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.queue.length };
  }
}
