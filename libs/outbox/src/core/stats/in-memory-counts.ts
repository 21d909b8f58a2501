import type { InMemoryRow } from '../in-memory-row';
import type { DestinationCounts } from './outbox-stats.port';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The stats query in plain code: what each SQL dialect's statement computes, for the in-memory store. */
export function countDestinations(rows: readonly InMemoryRow[], now: number): DestinationCounts[] {
  const byDestination = new Map<string, DestinationCounts>();
  for (const row of rows) {
    const recent = row.status === 'published' && row.publishedAt !== undefined && now - row.publishedAt < HOUR;
    if (row.status !== 'pending' && row.status !== 'dead' && !recent) continue;
    const { transport, destination } = row.message;
    const key = JSON.stringify([transport, destination]);
    let counts = byDestination.get(key);
    if (!counts) {
      counts = { transport, destination, pending: 0, inFlight: 0, retrying: 0, dead: 0, publishedLastMinute: 0, publishedLastHour: 0, oldestPendingAgeMs: null, lastPublishedAgoMs: null };
      byDestination.set(key, counts);
    }
    if (row.status === 'dead') counts.dead++;
    if (row.status === 'pending') {
      counts.pending++;
      const leased = row.leaseExpiresAt !== undefined && row.leaseExpiresAt > now;
      if (leased) counts.inFlight++;
      else if (row.nextAttemptAt !== undefined && row.nextAttemptAt > now) counts.retrying++;
      const due = dueSince(row, leased);
      if (due <= now) counts.oldestPendingAgeMs = Math.max(counts.oldestPendingAgeMs ?? 0, now - due);
    }
    if (recent) {
      const ago = now - row.publishedAt!;
      counts.publishedLastHour++;
      if (ago < MINUTE) counts.publishedLastMinute++;
      counts.lastPublishedAgoMs = Math.min(counts.lastPublishedAgoMs ?? ago, ago);
    }
  }
  return [...byDestination.values()];
}

/** As the SQL statements' `dueSince`: the lag counts from the end of a delay or a requeue until the row has failed once. */
function dueSince(row: InMemoryRow, leased: boolean): number {
  const firstAttempt = row.attempts === 0 || (row.attempts === 1 && leased);
  return row.nextAttemptAt !== undefined && firstAttempt ? row.nextAttemptAt : row.createdAt;
}
