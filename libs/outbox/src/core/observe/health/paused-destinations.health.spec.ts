import { summarize } from '../../stats/outbox-stats.reader';
import { judgeOutboxHealth } from './outbox-health.check';
import { leavePausedOut } from './paused-destinations.health';

const counts = (destination: string, pending: number, oldestPendingAgeMs: number | null) => ({
  transport: 'default', destination, pending, inFlight: 0, retrying: 0, dead: 0,
  publishedLastMinute: 0, publishedLastHour: 0, oldestPendingAgeMs, lastPublishedAgoMs: null,
});
const relay = { running: true, lastRoundAt: new Date(999_000), lastSuccessfulRoundAt: null };
const thresholds = { maxLagMs: 10_000, maxDeadRows: null, maxRoundAgeMs: 30_000 };
const pause = { destination: 'billing', pausedAt: '2026-11-24T04:00:00.000Z', reason: 'partner maintenance' };

describe('paused destinations in health', () => {
  it('reports a pause with its reason and held rows, and leaves its lag out of the verdict', () => {
    const snapshot = summarize([counts('billing', 7, 600_000), counts('orders', 2, 3_000)], 1_000_000, relay, [pause]);
    const { judged, paused } = leavePausedOut(snapshot);
    expect(paused).toEqual([{ ...pause, pending: 7 }]);
    expect(judged).toMatchObject({ pending: 2, oldestPendingAgeMs: 3_000 });
    expect(judgeOutboxHealth(judged, thresholds, 1_000_000, 0).healthy).toBe(true);
    // Without the pause the same rows are lag over the threshold.
    expect(judgeOutboxHealth(snapshot, thresholds, 1_000_000, 0).healthy).toBe(false);
  });

  it('still judges the destinations that are not paused', () => {
    const snapshot = summarize([counts('billing', 1, 1_000), counts('orders', 2, 60_000)], 1_000_000, relay, [pause]);
    const verdict = judgeOutboxHealth(leavePausedOut(snapshot).judged, thresholds, 1_000_000, 0);
    expect(verdict.reasons).toEqual([expect.stringContaining('(to "orders") is 60.0 s old, over health.maxLagMs (10.0 s); 2 message(s) pending')]);
  });

  it('leaves a snapshot without pauses as it is', () => {
    const snapshot = summarize([counts('orders', 1, 1)], 1_000_000, relay);
    expect(leavePausedOut(snapshot)).toEqual({ judged: snapshot, paused: [] });
  });
});
