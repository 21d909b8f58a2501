import { judgeInboxPoison } from './inbox-poison.health';

describe('judgeInboxPoison', () => {
  const summary = {
    waiting: 3,
    oldestWaitingAgeMs: 90_040,
    consumers: [
      { consumer: 'billing', failing: 0, waiting: 3, replayRequested: 1, oldestWaitingAgeMs: 90_040 },
      { consumer: 'shipping', failing: 2, waiting: 0, replayRequested: 0, oldestWaitingAgeMs: null },
    ],
  };

  it('is down when messages wait set aside, naming the consumers, the count and the oldest age', () => {
    const verdict = judgeInboxPoison(summary, 0);
    expect(verdict.healthy).toBe(false);
    expect(verdict.reasons).toEqual(['3 poison message(s) wait set aside (billing: 3), the oldest first failed 90 s ago; replay or delete them ("nest-outbox poison list")']);
    expect(verdict.details).toMatchObject({ waiting: 3, oldestWaitingAgeSeconds: 90, consumers: [{ consumer: 'billing', waiting: 3, replayRequested: 1 }, { consumer: 'shipping', failing: 2 }] });
  });

  it('is up with only failing records, or within maxWaiting', () => {
    expect(judgeInboxPoison({ waiting: 0, oldestWaitingAgeMs: null, consumers: [summary.consumers[1]] }, 0).healthy).toBe(true);
    expect(judgeInboxPoison(summary, 3).healthy).toBe(true);
  });
});
