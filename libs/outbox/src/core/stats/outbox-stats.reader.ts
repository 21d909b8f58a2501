import type { PausedDestination } from '../console/outbox-console.port';
import type { DestinationCounts, OutboxStatsSource } from './outbox-stats.port';
import type { OutboxDestinationStats, OutboxStatsSnapshot, RelayActivity } from './outbox-stats';

export interface OutboxStatsReaderConfig {
  source: OutboxStatsSource;
  /** A snapshot younger than this is served from memory: every scrape, probe and page share one query. */
  refreshIntervalMs: number;
  /** This instance's relay activity, read at each snapshot. */
  relayActivity: () => RelayActivity;
  now?: () => number;
}

/**
 * Serves stats snapshots from one query per refresh interval, whoever asks (metrics, health,
 * an admin page). Concurrent callers during a refresh share the same query; a failed query is
 * not cached, so the next caller tries again.
 */
export class OutboxStatsReader {
  private cached: { at: number; snapshot: OutboxStatsSnapshot } | undefined;
  private reading: Promise<OutboxStatsSnapshot> | undefined;
  private readonly now: () => number;

  constructor(private readonly config: OutboxStatsReaderConfig) {
    this.now = config.now ?? Date.now;
  }

  /** The latest snapshot, read again when older than the refresh interval (or when `fresh` is asked for). */
  async snapshot(options: { fresh?: boolean } = {}): Promise<OutboxStatsSnapshot> {
    const cached = this.cached;
    if (!options.fresh && cached && this.now() - cached.at < this.config.refreshIntervalMs) {
      return { ...cached.snapshot, relay: this.config.relayActivity() };
    }
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** The last snapshot read, without querying; `undefined` before the first read. */
  peek(): OutboxStatsSnapshot | undefined {
    return this.cached && { ...this.cached.snapshot, relay: this.config.relayActivity() };
  }

  private async read(): Promise<OutboxStatsSnapshot> {
    const [counts, paused] = await Promise.all([this.config.source.readCounts(), this.config.source.readPaused?.() ?? []]);
    const at = this.now();
    const snapshot = summarize(counts, at, this.config.relayActivity(), paused);
    this.cached = { at, snapshot };
    return snapshot;
  }
}

export function summarize(counts: DestinationCounts[], at: number, relay: RelayActivity, paused: PausedDestination[] = []): OutboxStatsSnapshot {
  const destinations = counts
    .map((row): OutboxDestinationStats => {
      const { lastPublishedAgoMs, ...rest } = row;
      return { ...rest, lastPublishedAt: lastPublishedAgoMs === null ? null : new Date(at - lastPublishedAgoMs) };
    })
    .sort((a, b) => a.transport.localeCompare(b.transport) || a.destination.localeCompare(b.destination));
  const sum = (pick: (row: OutboxDestinationStats) => number) => destinations.reduce((total, row) => total + pick(row), 0);
  const max = <T>(values: Array<T | null>, greater: (a: T, b: T) => boolean): T | null =>
    values.reduce<T | null>((best, value) => (value !== null && (best === null || greater(value, best)) ? value : best), null);
  return {
    readAt: new Date(at),
    pending: sum((row) => row.pending),
    inFlight: sum((row) => row.inFlight),
    retrying: sum((row) => row.retrying),
    dead: sum((row) => row.dead),
    publishedLastMinute: sum((row) => row.publishedLastMinute),
    publishedLastHour: sum((row) => row.publishedLastHour),
    oldestPendingAgeMs: max(destinations.map((row) => row.oldestPendingAgeMs), (a, b) => a > b),
    lastPublishedAt: max(destinations.map((row) => row.lastPublishedAt), (a, b) => a.getTime() > b.getTime()),
    destinations,
    relay,
    paused,
  };
}
