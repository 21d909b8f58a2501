import { settleWithin } from './deadline';

describe('settleWithin', () => {
  it("says 'done' for work that resolves or rejects in time", async () => {
    await expect(settleWithin(Promise.resolve(1), 100)).resolves.toBe('done');
    await expect(settleWithin(Promise.reject(new Error('refused')), 100)).resolves.toBe('done');
  });

  it("says 'timeout' for work that does not settle in time, without waiting for it", async () => {
    const started = Date.now();
    await expect(settleWithin(new Promise(() => undefined), 50)).resolves.toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
