import type { WalSlotLag } from './wal-slot.setup';

export interface WalHealthThresholds {
  /** Down above this many bytes retained; `null`: no limit. */
  maxRetainedBytes: number | null;
  /** Down when the reader confirms more than this late; `null`: no limit. */
  maxLagMs: number | null;
}

export interface WalHealthVerdict {
  healthy: boolean;
  reasons: string[];
  details: { slot: string; retainedBytes: number | null; lagSeconds: number | null; streamed: boolean };
}

/** Judges a slot's lag against the thresholds; plain code so that every rule is unit-tested. */
export function judgeWalSlot(slot: string, lag: WalSlotLag | undefined, thresholds: WalHealthThresholds): WalHealthVerdict {
  const reasons: string[] = [];
  if (!lag) {
    reasons.push(`the replication slot "${slot}" does not exist: events written now reach no stream; start an instance that relays, which creates it`);
  } else {
    if (!lag.active) reasons.push(`no instance streams the replication slot "${slot}": events wait in the WAL (${lag.retainedBytes} bytes retained)`);
    if (thresholds.maxRetainedBytes !== null && lag.retainedBytes > thresholds.maxRetainedBytes) {
      reasons.push(`the replication slot "${slot}" retains ${lag.retainedBytes} bytes of WAL, over wal.maxRetainedBytes (${thresholds.maxRetainedBytes})`);
    }
    if (thresholds.maxLagMs !== null && lag.lagSeconds !== null && lag.lagSeconds * 1000 > thresholds.maxLagMs) {
      reasons.push(`the stream confirms ${lag.lagSeconds.toFixed(1)} s behind the server, over health.maxLagMs (${(thresholds.maxLagMs / 1000).toFixed(1)} s)`);
    }
  }
  return {
    healthy: reasons.length === 0,
    reasons,
    details: { slot, retainedBytes: lag?.retainedBytes ?? null, lagSeconds: lag?.lagSeconds ?? null, streamed: lag?.active ?? false },
  };
}
