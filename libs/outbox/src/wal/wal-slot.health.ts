import type { StreamIncident } from '../core/stream/delivery-stream.port';
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

/**
 * Judges a slot's lag against the thresholds (`waitingMs`: how long this instance has held its
 * oldest received event unpublished), and the slot itself: missing, another database's,
 * invalidated, or made anew over a former one whose events may be lost (`incident`, `wal.write:
 * 'message'`: down until the instance restarts). Plain code so that every rule is unit-tested.
 */
export function judgeWalSlot(slot: string, lag: WalSlotLag | undefined, thresholds: WalHealthThresholds, incident?: StreamIncident, waitingMs?: number): WalHealthVerdict {
  const reasons: string[] = [];
  if (thresholds.maxLagMs !== null && waitingMs !== undefined && waitingMs > thresholds.maxLagMs) {
    reasons.push(`the stream has held committed events unpublished for ${(waitingMs / 1000).toFixed(1)} s (the broker refuses them or is away), over health.maxLagMs (${(thresholds.maxLagMs / 1000).toFixed(1)} s)`);
  }
  if (incident?.eventsMayBeLost) {
    reasons.push(
      `the replication slot "${slot}" was ${incident.reason === 'invalidated' ? 'invalidated' : 'gone'} and made anew at ${incident.at.toISOString()}: ` +
        `events committed between ${incident.formerPosition ?? 'the last saved position'} and ${incident.startsAt} may be lost (wal.write 'message')`,
    );
  }
  if (lag?.foreignDatabase !== undefined) {
    reasons.push(`the replication slot "${slot}" belongs to the database "${lag.foreignDatabase}", not this one: give this outbox its own wal.slotName`);
  } else if (lag?.invalidated) {
    reasons.push(`the replication slot "${slot}" was invalidated by the server (past max_slot_wal_keep_size): the relaying instance makes it anew`);
  } else if (!lag) {
    reasons.push(`the replication slot "${slot}" does not exist in this database: an instance that relays makes it (at start, or when its stream finds it gone)`);
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
