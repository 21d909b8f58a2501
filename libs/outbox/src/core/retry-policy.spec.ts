import { RetryPolicy } from './retry-policy';

describe('RetryPolicy', () => {
  const noJitter = { initialMs: 100, maxMs: 1_000, jitter: 0 };

  it('doubles the delay after each failed attempt up to the cap', () => {
    const policy = new RetryPolicy(10, noJitter);
    expect([1, 2, 3, 4, 5, 6].map((attempt) => policy.delayAfter(attempt))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('declares the row dead once max attempts are used', () => {
    const policy = new RetryPolicy(3, noJitter);
    expect(policy.delayAfter(2)).toBe(200);
    expect(policy.delayAfter(3)).toBeNull();
    expect(policy.delayAfter(4)).toBeNull();
  });

  it('takes up to the jitter share off each delay', () => {
    const lowest = new RetryPolicy(10, { ...noJitter, jitter: 0.5 }, () => 0.999999);
    const highest = new RetryPolicy(10, { ...noJitter, jitter: 0.5 }, () => 0);
    expect(lowest.delayAfter(3)).toBe(200);
    expect(highest.delayAfter(3)).toBe(400);
  });
});
