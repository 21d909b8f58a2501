import { LOCK_BUCKETS, lockBucket, lockBuckets } from './aggregate-lock-buckets.sql';

describe('lockBucket', () => {
  it('maps a key to the same bucket forever: writers of every version must agree (FNV-1a over UTF-8)', () => {
    // Known FNV-1a 32-bit values: "" -> 0x811c9dc5, "a" -> 0xe40c292c.
    expect(lockBucket('')).toBe(0x811c9dc5 % LOCK_BUCKETS);
    expect(lockBucket('a')).toBe(0xe40c292c % LOCK_BUCKETS);
    expect(lockBucket('order\u001fø-1')).toBe(lockBucket('order\u001fø-1'));
  });

  it('spreads keys over all the buckets', () => {
    const used = new Set(Array.from({ length: 20_000 }, (_, index) => lockBucket(`order\u001f${index}`)));
    expect(used.size).toBe(LOCK_BUCKETS);
  });

  it('gives the distinct buckets of several keys in ascending order', () => {
    const keys = ['order\u001f1', 'order\u001f2', 'order\u001f1'];
    const buckets = lockBuckets(keys);
    expect(buckets).toEqual([...new Set(keys.map(lockBucket))].sort((a, b) => a - b));
    expect(buckets.length).toBeLessThanOrEqual(2);
  });
});
