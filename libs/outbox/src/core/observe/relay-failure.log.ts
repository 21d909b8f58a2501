import type { RelayObserver, SettledBatch } from './relay-observer';

interface Logger {
  warn(message: string): void;
  error(message: string): void;
  log(message: string): void;
}

interface Outage {
  since: number;
  failures: number;
}

/**
 * Logs what an operator needs during a broker outage: one line per batch and destination that
 * failed, with counts and the error, and one line when that destination publishes again.
 * (One line per row and attempt drowns the log at any real volume.)
 */
export class RelayFailureLog implements RelayObserver {
  private readonly outages = new Map<string, Outage>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  settled(batch: SettledBatch): void {
    const groups = new Map<string, { label: string; sent: number; failed: number; dead: number; maxAttempt: number; errors: Map<string, number> }>();
    for (const { message, error, retryInMs } of batch.outcomes) {
      const key = `${message.transport}\u0000${message.destination}`;
      let group = groups.get(key);
      if (!group) {
        group = { label: destinationLabel(message.transport, message.destination), sent: 0, failed: 0, dead: 0, maxAttempt: 0, errors: new Map() };
        groups.set(key, group);
      }
      group.sent++;
      if (error === undefined) continue;
      group.failed++;
      if (retryInMs === null) group.dead++;
      group.maxAttempt = Math.max(group.maxAttempt, message.attempt);
      group.errors.set(error, (group.errors.get(error) ?? 0) + 1);
    }
    for (const [key, group] of groups) {
      if (group.failed === 0) {
        this.recovered(key, group.label);
        continue;
      }
      const outage = this.outages.get(key) ?? { since: this.now(), failures: 0 };
      outage.failures += group.failed;
      this.outages.set(key, outage);
      const [firstError, ...others] = [...group.errors.keys()];
      const fate = group.dead > 0 ? `${group.failed - group.dead} will be retried, ${group.dead} now dead` : 'will be retried';
      const line =
        `Outbox relay ${batch.relayId}: ${group.failed} of ${group.sent} message(s) to ${group.label} failed ` +
        `(${fate}; attempt ${group.maxAttempt}): ${firstError}${others.length > 0 ? ` (and ${others.length} other error text(s))` : ''}`;
      if (group.dead > 0) this.logger.error(line);
      else this.logger.warn(line);
    }
  }

  private recovered(key: string, label: string): void {
    const outage = this.outages.get(key);
    if (!outage) return;
    this.outages.delete(key);
    const seconds = ((this.now() - outage.since) / 1000).toFixed(1);
    this.logger.log(`Outbox: publishing to ${label} recovered after ${seconds} s (${outage.failures} failed attempt(s) meanwhile).`);
  }
}

export function destinationLabel(transport: string, destination: string): string {
  return transport === 'default' ? `"${destination}"` : `"${destination}" on ${transport}`;
}
