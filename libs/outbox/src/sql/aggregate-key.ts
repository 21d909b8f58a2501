/** One aggregate, as the key its commit-order lock is taken under (a separator no name contains). */
export function aggregateKey(aggregateType: string, aggregateId: string): string {
  return `${aggregateType}\u001f${aggregateId}`;
}
