/**
 * The shard of an aggregate among `shards`: the 32-bit FNV-1a hash of its id's UTF-8 bytes, modulo
 * the count. Fixed for good: every event of an aggregate must land in the same shard's table for
 * its order to hold, so neither the function nor the shard list may change while events are pending.
 */
export function shardOf(aggregateId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(aggregateId, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
