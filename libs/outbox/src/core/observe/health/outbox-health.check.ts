import type { HealthThresholds } from '../observability.options';
import type { OutboxStatsSnapshot } from '../../stats/outbox-stats';
import { destinationLabel } from '../relay-failure.log';

export interface OutboxHealthVerdict {
  healthy: boolean;
  /** Why the outbox is down, one sentence per threshold passed; empty when healthy. */
  reasons: string[];
  details: {
    pending: number;
    dead: number;
    oldestPendingAgeMs: number | null;
    relayRunning: boolean;
    lastRoundAt: string | null;
  };
}

/** Judges a stats snapshot against the thresholds; plain code so that every rule is unit-tested. */
export function judgeOutboxHealth(snapshot: OutboxStatsSnapshot, thresholds: Required<HealthThresholds>, now: number, relayStartedAt: number): OutboxHealthVerdict {
  const reasons: string[] = [];
  const { maxLagMs, maxDeadRows, maxRoundAgeMs } = thresholds;
  if (maxLagMs !== null && snapshot.oldestPendingAgeMs !== null && snapshot.oldestPendingAgeMs > maxLagMs) {
    const worst = snapshot.destinations.reduce((a, b) => ((b.oldestPendingAgeMs ?? -1) > (a.oldestPendingAgeMs ?? -1) ? b : a));
    reasons.push(
      `the oldest pending message (to ${destinationLabel(worst.transport, worst.destination)}) is ${seconds(snapshot.oldestPendingAgeMs)} old, ` +
        `over health.maxLagMs (${seconds(maxLagMs)}); ${snapshot.pending} message(s) pending`,
    );
  }
  if (maxDeadRows !== null && snapshot.dead > maxDeadRows) {
    reasons.push(`${snapshot.dead} dead message(s), over health.maxDeadRows (${maxDeadRows}); see OutboxAdmin.listDead()`);
  }
  const { relay } = snapshot;
  if (maxRoundAgeMs !== null && relay.running && snapshot.pending > 0) {
    const since = relay.lastRoundAt?.getTime() ?? relayStartedAt;
    if (now - since > maxRoundAgeMs) {
      reasons.push(
        `the relay has not finished a round for ${seconds(now - since)} while ${snapshot.pending} message(s) are pending, ` +
          `over health.maxRoundAgeMs (${seconds(maxRoundAgeMs)})`,
      );
    }
  }
  return {
    healthy: reasons.length === 0,
    reasons,
    details: {
      pending: snapshot.pending,
      dead: snapshot.dead,
      oldestPendingAgeMs: snapshot.oldestPendingAgeMs,
      relayRunning: relay.running,
      lastRoundAt: relay.lastRoundAt?.toISOString() ?? null,
    },
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
