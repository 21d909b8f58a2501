import { summarizePoison } from './poison-summary';

describe('summarizePoison', () => {
  const now = Date.parse('2026-01-01T00:10:00.000Z');

  it('counts set-aside and replay-requested records as waiting, per consumer, with the oldest age', () => {
    const summary = summarizePoison(
      [
        { consumer: 'shipping', state: 'failing', count: 4, oldestFailedAt: '2026-01-01T00:00:00.000Z' },
        { consumer: 'billing', state: 'set-aside', count: 2, oldestFailedAt: '2026-01-01T00:09:00.000Z' },
        { consumer: 'billing', state: 'replay-requested', count: 1, oldestFailedAt: '2026-01-01T00:05:00.000Z' },
      ],
      now,
    );
    expect(summary).toEqual({
      waiting: 3,
      oldestWaitingAgeMs: 300_000,
      consumers: [
        { consumer: 'billing', failing: 0, waiting: 3, replayRequested: 1, oldestWaitingAgeMs: 300_000 },
        // Failing records are being retried: they do not wait, and their age is not the waiting age.
        { consumer: 'shipping', failing: 4, waiting: 0, replayRequested: 0, oldestWaitingAgeMs: null },
      ],
    });
  });

  it('says nothing waits when the table is empty', () => {
    expect(summarizePoison([], now)).toEqual({ waiting: 0, oldestWaitingAgeMs: null, consumers: [] });
  });
});
