import { OutboxWriteError } from '../../core/outbox.errors';
import { sqliteConnectionWaitTimedOut } from '../../core/outbox.messages';

interface Waiting<T> {
  holder: T;
  enter(): void;
  timer: NodeJS.Timeout;
}

/**
 * Hands one connection to one holder at a time, in the order they asked. A holder keeps its turn
 * across many `take`s (a transaction's statements) until it gives it back.
 */
export class ConnectionTurns<T> {
  private holder: T | undefined;
  private readonly waiting: Waiting<T>[] = [];

  constructor(
    /** How long a holder may wait for its turn before the wait fails (see sqliteConnectionWaitTimedOut). */
    private readonly maxWaitMs: number,
  ) {}

  isHeldBy(holder: T): boolean {
    return this.holder === holder;
  }

  /** The current holder, if any. */
  get current(): T | undefined {
    return this.holder;
  }

  take(holder: T): Promise<void> | undefined {
    if (this.holder === holder) return undefined;
    if (this.holder === undefined) {
      this.holder = holder;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Waiting<T> = {
        holder,
        enter: resolve,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(new OutboxWriteError(sqliteConnectionWaitTimedOut(this.maxWaitMs)));
        }, this.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  give(holder: T): void {
    if (this.holder !== holder) return;
    const next = this.waiting.shift();
    this.holder = next?.holder;
    if (!next) return;
    clearTimeout(next.timer);
    next.enter();
  }
}
