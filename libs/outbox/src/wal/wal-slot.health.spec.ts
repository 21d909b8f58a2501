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

  it('is down while this instance has held a committed event unpublished longer than health.maxLagMs', () => {
    const streamed = { retainedBytes: 10, lagSeconds: 0, active: true };
    expect(judgeWalSlot('s', streamed, limits, undefined, 4_000).healthy).toBe(true);
    expect(judgeWalSlot('s', streamed, limits, undefined, 9_500).reasons).toEqual([expect.stringContaining('held committed events unpublished for 9.5 s')]);
  });

  it('names a slot of another database, an invalidated slot, and a slot made anew over events that may be lost', () => {
    expect(judgeWalSlot('s', { retainedBytes: 0, lagSeconds: null, active: false, foreignDatabase: 'billing' }, limits).reasons).toEqual([
      expect.stringContaining('belongs to the database "billing"'),
    ]);
    expect(judgeWalSlot('s', { retainedBytes: 9_000, lagSeconds: null, active: false, invalidated: true }, limits).reasons).toEqual([expect.stringContaining('was invalidated by the server')]);
    const incident = { reason: 'missing' as const, formerPosition: '0/16B3748', startsAt: '0/2000060', keptRows: 0, at: new Date(0) };
    const lost = judgeWalSlot('s', { retainedBytes: 10, lagSeconds: 0, active: true }, limits, { ...incident, eventsMayBeLost: true });
    expect(lost.healthy).toBe(false);
    expect(lost.reasons).toEqual([expect.stringContaining('between 0/16B3748 and 0/2000060 may be lost')]);
    expect(judgeWalSlot('s', { retainedBytes: 10, lagSeconds: 0, active: true }, limits, { ...incident, eventsMayBeLost: false }).healthy).toBe(true);
  });
});
