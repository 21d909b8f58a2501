/** Deletes old marks `batchSize` per statement until a batch comes back short (at most `maxBatches`); resolves with how many went. */
export async function pruneInBatches(prune: (retentionMs: number, batchSize: number) => Promise<number>, retentionMs: number, batchSize: number, maxBatches = 100): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const deleted = await prune(retentionMs, batchSize);
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}
