import { judgeWalSlot } from './wal-slot.health';

const limits = { maxRetainedBytes: 1_000, maxLagMs: 5_000 };

describe('judgeWalSlot', () => {
  it('is healthy when the slot is streamed, retains little and confirms promptly', () => {
    expect(judgeWalSlot('s', { retainedBytes: 10, lagSeconds: 0.2, active: true }, limits)).toMatchObject({ healthy: true, reasons: [] });
  });

  it('names each threshold passed', () => {
    const verdict = judgeWalSlot('s', { retainedBytes: 5_000, lagSeconds: 9, active: false }, limits);
    expect(verdict.healthy).toBe(false);
    expect(verdict.reasons).toEqual([
      expect.stringContaining('no instance streams the replication slot "s"'),
      expect.stringContaining('over wal.maxRetainedBytes (1000)'),
      expect.stringContaining('over health.maxLagMs (5.0 s)'),
    ]);
  });

  it('reports a missing slot, and skips the checks turned off', () => {
    expect(judgeWalSlot('s', undefined, limits).reasons).toEqual([expect.stringContaining('does not exist')]);
    expect(judgeWalSlot('s', { retainedBytes: 5_000, lagSeconds: 9, active: true }, { maxRetainedBytes: null, maxLagMs: null }).healthy).toBe(true);
  });
});
