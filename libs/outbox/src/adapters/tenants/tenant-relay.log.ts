import type { RoundEnd, RelayObserver } from '../../core/observe/relay-observer';
import type { RelayLogger } from '../../core/outbox-relay';
import { tenantRelayRecovered, tenantRelayStillFailing } from './tenants.messages';

/** The first summary of a repeated failure comes this long after the failure; each next one twice as long after, up to the cap. */
export const FIRST_SUMMARY_AFTER_MS = 60_000;
export const LONGEST_SUMMARY_INTERVAL_MS = 15 * 60_000;

interface Failing {
  since: number;
  /** The text of the failure last logged in full: the same text again is counted, not logged. */
  text: string;
  /** Failures of that text since it was last logged or summarized. */
  repeats: number;
  /** Failures since the relay last completed a round. */
  total: number;
  interval: number;
  nextSummaryAt: number;
}

/**
 * One tenant's relay logger: every line names the tenant and its table, and a failure that repeats at
 * every poll (the tenant's database refuses or does not answer) is not logged at every poll.
 *
 * A line with a stack is the relay failing to reach the database (a claim, or recording a batch's
 * outcome). The first one is logged in full; the same text again is only counted, and summarized
 * after 1 minute, then 2, 4, … up to every 15 minutes; a different text is logged (without its
 * stack) at once; and once the relay completes a round again, one line says it recovered, after how
 * long and how many failures. Lines without a stack (a row gone dead, a broker failing) are the
 * rows' own and pass through as they are.
 */
export class TenantRelayLog implements RelayLogger, RelayObserver {
  private failing: Failing | undefined;

  constructor(
    private readonly logger: RelayLogger,
    /** `Outbox of tenant "acme" (outbox_messages)`: how every line begins. */
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  log(message: string): void {
    this.logger.log(`${this.prefix}: ${message}`);
  }

  warn(message: string): void {
    this.logger.warn(`${this.prefix}: ${message}`);
  }

  error(message: string, stack?: string): void {
    if (stack === undefined) return this.logger.error(`${this.prefix}: ${message}`);
    const now = this.now();
    const failing = this.failing;
    if (!failing) {
      this.failing = { since: now, text: message, repeats: 0, total: 1, interval: FIRST_SUMMARY_AFTER_MS, nextSummaryAt: now + FIRST_SUMMARY_AFTER_MS };
      return this.logger.error(`${this.prefix}: ${message}`, stack);
    }
    failing.total++;
    if (message !== failing.text) {
      // What fails has changed (a refused connection became a timeout, …): worth a line, not another stack.
      failing.text = message;
      failing.repeats = 0;
      return this.logger.error(`${this.prefix}: ${message}`);
    }
    failing.repeats++;
    if (now < failing.nextSummaryAt) return;
    this.logger.warn(`${this.prefix}: ${tenantRelayStillFailing(failing.repeats, new Date(failing.since), failing.text)}`);
    failing.repeats = 0;
    failing.interval = Math.min(failing.interval * 2, LONGEST_SUMMARY_INTERVAL_MS);
    failing.nextSummaryAt = now + failing.interval;
  }

  roundEnded(round: RoundEnd): void {
    const failing = this.failing;
    if (!round.completed || !failing) return;
    this.failing = undefined;
    this.logger.log(`${this.prefix}: ${tenantRelayRecovered((this.now() - failing.since) / 1000, failing.total)}`);
  }
}
