import type { PausedDestination } from '../console/outbox-console.port';
import type { DestinationCounts } from './outbox-stats.port';

/**
 * The outbox as an operator sees it: one destination (a topic, queue or subject on one transport),
 * with the store's counts and, instead of an age, when a row was last published.
 */
export type OutboxDestinationStats = Omit<DestinationCounts, 'lastPublishedAgoMs'> & {
  /** When a row was last published, looking back one hour; `null` when none was. */
  lastPublishedAt: Date | null;
};

/** What this instance's relay last did (`null` times until it has done it once). */
export interface RelayActivity {
  /** Whether this instance runs a relay (`relay: true` and started). */
  running: boolean;
  /**
   * When this relay last finished a round (claim → publish → settle): the claim answered and the
   * outcomes were recorded, whether the publishes succeeded or not. Rounds whose claim or settle
   * failed (database away) do not count.
   */
  lastRoundAt: Date | null;
  /** When this relay last finished a round without a failed publish or a store error. */
  lastSuccessfulRoundAt: Date | null;
}

/** The WAL delivery mode's replication slot, as the stats snapshot carries it. */
export interface OutboxWalStats {
  slot: string;
  /** Bytes of WAL the slot retains (from its confirmed position to the server's); `null` when the slot does not exist. */
  retainedBytes: number | null;
  /** Seconds the stream confirms behind the server (`flush_lag`); `null` when caught up, not streamed, or no slot. */
  lagSeconds: number | null;
  /** Whether an instance streams the slot now. */
  active: boolean;
}

/** A snapshot of the whole outbox table: totals over every destination, each destination, and this instance's relay. */
export interface OutboxStatsSnapshot extends Omit<OutboxDestinationStats, 'transport' | 'destination'> {
  /** When the counts were read from the database. */
  readAt: Date;
  destinations: OutboxDestinationStats[];
  relay: RelayActivity;
  /** Destinations an operator paused: no relay publishes to them, and their rows wait. */
  paused: PausedDestination[];
  /** The WAL mode's slot (`delivery: 'wal'`), read at most once per `stats.refreshIntervalMs`; `undefined` in the table mode. */
  wal?: OutboxWalStats;
}
