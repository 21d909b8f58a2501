import { shardOf } from './shard-of';

describe('shardOf', () => {
  it('is FNV-1a of the UTF-8 bytes modulo the count: stable across runs and processes', () => {
    // FNV-1a 32-bit test vectors: "" → 0x811c9dc5, "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
    expect(shardOf('', 0x7fffffff)).toBe(0x811c9dc5 % 0x7fffffff);
    expect(shardOf('a', 1_000_003)).toBe(0xe40c292c % 1_000_003);
    expect(shardOf('foobar', 7)).toBe(0xbf9cf968 % 7);
    expect(shardOf('ü', 1_000_003)).toBe(shardOf('\u00fc', 1_000_003));
  });

  it('spreads ids over the shards', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4_000; i++) counts[shardOf(`order-${i}`, 4)]++;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});
