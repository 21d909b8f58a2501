import type { PausedDestination } from '../console/outbox-console.port';

/**
 * Counts of one destination as the store reads them in one statement. Ages are measured with the
 * database's clock and given as "milliseconds ago", so that clock skew and time zones between the
 * application and the database never enter the figures.
 */
export interface DestinationCounts {
  transport: string;
  destination: string;
  /** Rows not yet acknowledged by the broker (including those in flight and waiting for a retry). */
  pending: number;
  /** Pending rows a relay holds a live lease on right now. */
  inFlight: number;
  /** Pending rows that failed at least once and wait for their next attempt. */
  retrying: number;
  /** Rows that used up their attempts and wait for an operator. */
  dead: number;
  /** Rows published in the last 60 s (0 with `cleanup.deleteOnPublish`, which keeps no published rows). */
  publishedLastMinute: number;
  /** Rows published in the last hour (0 with `cleanup.deleteOnPublish`). */
  publishedLastHour: number;
  /**
   * The lag: how long the oldest pending row has been due — since its insert, the end of its delay
   * (`delayMs`/`deliverAt`) or its requeue; a row that has failed counts from its insert. `null`
   * when no pending row is due.
   */
  oldestPendingAgeMs: number | null;
  /** How long ago the last row was published, looking back one hour; `null` when none was. */
  lastPublishedAgoMs: number | null;
}

/** Reads the counts of every destination that has pending, dead or recently published rows, in one cheap query. */
export interface OutboxStatsSource {
  readCounts(): Promise<DestinationCounts[]>;
  /** Destinations an operator paused, with when and why; a store without pauses leaves it out. */
  readPaused?(): Promise<PausedDestination[]>;
}
