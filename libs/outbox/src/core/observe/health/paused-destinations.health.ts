import type { OutboxStatsSnapshot } from '../../stats/outbox-stats';

/** A paused destination as the health indicator reports it. */
export interface PausedDestinationHealth {
  destination: string;
  pausedAt: string;
  /** As the operator gave it at pause time; `null` when none was given. */
  reason: string | null;
  /** Rows held back by the pause. */
  pending: number;
}

/**
 * A pause is an operator's decision, so it is reported, not judged: the rows it holds back grow
 * older by design, and a readiness probe that turned 503 over it would take instances out of
 * service for doing what they were told. The judged snapshot leaves the paused destinations out
 * of the lag and the pending count; `paused` lists them with their reason, so no pause goes unseen.
 */
export function leavePausedOut(snapshot: OutboxStatsSnapshot): { judged: OutboxStatsSnapshot; paused: PausedDestinationHealth[] } {
  if (snapshot.paused.length === 0) return { judged: snapshot, paused: [] };
  const names = new Set(snapshot.paused.map((p) => p.destination));
  const destinations = snapshot.destinations.filter((d) => !names.has(d.destination));
  const ages = destinations.map((d) => d.oldestPendingAgeMs).filter((age): age is number => age !== null);
  const judged: OutboxStatsSnapshot = {
    ...snapshot,
    destinations,
    pending: destinations.reduce((sum, d) => sum + d.pending, 0),
    oldestPendingAgeMs: ages.length === 0 ? null : Math.max(...ages),
  };
  const paused = snapshot.paused.map((p) => ({
    ...p,
    pending: snapshot.destinations.filter((d) => d.destination === p.destination).reduce((sum, d) => sum + d.pending, 0),
  }));
  return { judged, paused };
}
