import type { PoisonSummary } from '../../poison/poison-summary';

export interface InboxPoisonHealthVerdict {
  healthy: boolean;
  reasons: string[];
  details: {
    waiting: number;
    oldestWaitingAgeSeconds: number | null;
    consumers: Array<{ consumer: string; waiting: number; replayRequested: number; failing: number; oldestWaitingAgeSeconds: number | null }>;
  };
}

const seconds = (ms: number | null) => (ms === null ? null : Math.round(ms / 100) / 10);

/**
 * Down when more than `maxWaiting` messages wait set aside: each was acknowledged without being
 * handled, and only an operator (replay or delete) brings it to an end. Plain code, unit-tested.
 */
export function judgeInboxPoison(summary: PoisonSummary, maxWaiting: number): InboxPoisonHealthVerdict {
  const reasons: string[] = [];
  if (summary.waiting > maxWaiting) {
    const who = summary.consumers.filter((c) => c.waiting > 0).map((c) => `${c.consumer}: ${c.waiting}`);
    reasons.push(
      `${summary.waiting} poison message(s) wait set aside (${who.join(', ')}), the oldest first failed ${seconds(summary.oldestWaitingAgeMs)} s ago; ` +
        `replay or delete them ("nest-outbox poison list")`,
    );
  }
  return {
    healthy: reasons.length === 0,
    reasons,
    details: {
      waiting: summary.waiting,
      oldestWaitingAgeSeconds: seconds(summary.oldestWaitingAgeMs),
      consumers: summary.consumers.map((c) => ({
        consumer: c.consumer,
        waiting: c.waiting,
        replayRequested: c.replayRequested,
        failing: c.failing,
        oldestWaitingAgeSeconds: seconds(c.oldestWaitingAgeMs),
      })),
    },
  };
}
