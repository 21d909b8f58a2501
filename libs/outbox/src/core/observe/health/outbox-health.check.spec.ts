import { summarize } from '../../stats/outbox-stats.reader';
import { judgeOutboxHealth } from './outbox-health.check';

const thresholds = { maxLagMs: 10_000, maxDeadRows: 2, maxRoundAgeMs: 30_000 };
const counts = (overrides: object) => ({
  transport: 'default', destination: 'orders', pending: 0, inFlight: 0, retrying: 0, dead: 0,
  publishedLastMinute: 0, publishedLastHour: 0, oldestPendingAgeMs: null, lastPublishedAgoMs: null, ...overrides,
});
const now = 1_000_000;

describe('judgeOutboxHealth', () => {
  it('is up within every threshold', () => {
    const snapshot = summarize([counts({ pending: 3, oldestPendingAgeMs: 9_000, dead: 2 })], now, { running: true, lastRoundAt: new Date(now - 1_000), lastSuccessfulRoundAt: null });
    expect(judgeOutboxHealth(snapshot, thresholds, now, 0)).toMatchObject({ healthy: true, reasons: [] });
  });

  it('gives one reason per threshold passed, naming the option', () => {
    const snapshot = summarize([counts({ pending: 3, oldestPendingAgeMs: 12_000, dead: 3 })], now, { running: true, lastRoundAt: new Date(now - 31_000), lastSuccessfulRoundAt: null });
    const verdict = judgeOutboxHealth(snapshot, thresholds, now, 0);
    expect(verdict.healthy).toBe(false);
    expect(verdict.reasons).toEqual([
      expect.stringContaining('is 12.0 s old, over health.maxLagMs (10.0 s)'),
      expect.stringContaining('3 dead message(s), over health.maxDeadRows (2)'),
      expect.stringContaining('has not finished a round for 31.0 s while 3 message(s) are pending, over health.maxRoundAgeMs'),
    ]);
  });

  it('does not call an idle relay stalled, nor judge a relay this instance does not run, and skips null thresholds', () => {
    const idle = summarize([], now, { running: true, lastRoundAt: new Date(0), lastSuccessfulRoundAt: null });
    expect(judgeOutboxHealth(idle, thresholds, now, 0).healthy).toBe(true);
    const writer = summarize([counts({ pending: 1, oldestPendingAgeMs: 1 })], now, { running: false, lastRoundAt: null, lastSuccessfulRoundAt: null });
    expect(judgeOutboxHealth(writer, thresholds, now, 0).healthy).toBe(true);
    const lagging = summarize([counts({ pending: 1, oldestPendingAgeMs: 99_000, dead: 50 })], now, { running: false, lastRoundAt: null, lastSuccessfulRoundAt: null });
    expect(judgeOutboxHealth(lagging, { maxLagMs: null, maxDeadRows: null, maxRoundAgeMs: null }, now, 0).healthy).toBe(true);
  });
});
