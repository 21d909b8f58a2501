import type { PausedDestination } from '../core/console/outbox-console.port';
import type { DestinationCounts, OutboxStatsSource } from '../core/stats/outbox-stats.port';
import { pausedListStatement } from './console/console.sql';
import { toPaused } from './console/sql-outbox-console.store';
import { statsStatement, type StatsDialect } from './dialects/outbox-stats.sql';
import type { SqlRunner } from '../core/sql-connection.port';
import type { OutboxTable } from './dialects/outbox-table';
import { StreamedCounts } from './streamed-counts';

const HOUR_MINUTES = 60;

interface PublishedMinute {
  transport: string;
  destination: string;
  count: number;
}

/**
 * Stats of an outbox table, read with one statement outside application transactions. The rows
 * published in the last hour are counted per minute and kept here: each read counts again only
 * the previous and the current minute (which also catches rows whose publish committed a little
 * late), so a busy table costs the same to read every few seconds as a quiet one.
 */
export class SqlOutboxStatsSource implements OutboxStatsSource {
  /** Minute number (database clock) → destination key → rows published in that minute. */
  private readonly minutes = new Map<number, Map<string, PublishedMinute>>();
  /** Destination key → local time of its newest published row seen. */
  private readonly lastPublished = new Map<string, number>();
  private currentMinute: number | null = null;

  // PostgreSQL: what the WAL stream published, counted beside the rows (see StreamedCounts).
  private readonly streamed: StreamedCounts | undefined;

  constructor(
    private readonly dialect: StatsDialect,
    private readonly table: OutboxTable,
    private readonly runner: SqlRunner,
    private readonly now: () => number = Date.now,
  ) {
    this.streamed = dialect === 'postgres' ? new StreamedCounts(table, runner, now) : undefined;
  }

  async readPaused(): Promise<PausedDestination[]> {
    return (await this.runner.rows(pausedListStatement(this.table.paused.quoted(this.dialect)))).map(toPaused);
  }

  async readCounts(): Promise<DestinationCounts[]> {
    const since = this.currentMinute === null ? null : this.currentMinute - 1;
    const rows = await this.runner.rows(statsStatement(this.dialect, this.table, since, (await this.streamed?.exist()) === true));
    const readAt = this.now();
    const backlog = new Map<string, DestinationCounts>();
    const lastMinute = new Map<string, number>();
    const fresh = new Map<number, Map<string, PublishedMinute>>();
    for (const row of rows) {
      if (row.kind === 'clock') {
        this.currentMinute = Number(row.minute);
        continue;
      }
      const transport = String(row.transport);
      const destination = String(row.destination);
      const key = `${transport}\u0000${destination}`;
      if (row.kind === 'backlog') {
        backlog.set(key, { ...emptyCounts(transport, destination), ...backlogCounts(row) });
        continue;
      }
      const minute = Number(row.minute);
      const byDestination = fresh.get(minute) ?? new Map<string, PublishedMinute>();
      // A minute may come twice: from the table's rows and from the stream's counts.
      byDestination.set(key, { transport, destination, count: (byDestination.get(key)?.count ?? 0) + Number(row.published ?? 0) });
      fresh.set(minute, byDestination);
      lastMinute.set(key, (lastMinute.get(key) ?? 0) + Number(row.publishedLastMinute ?? 0));
      const ago = milliseconds(row.lastPublishedAgoMs);
      if (ago !== null) this.lastPublished.set(key, Math.max(this.lastPublished.get(key) ?? 0, readAt - ago));
    }
    // The minutes read again replace what was kept of them; minutes older than an hour go.
    if (since !== null) for (const minute of [...this.minutes.keys()]) if (minute >= since) this.minutes.delete(minute);
    for (const [minute, byDestination] of fresh) this.minutes.set(minute, byDestination);
    const current = this.currentMinute ?? Math.floor(readAt / 60_000);
    for (const minute of [...this.minutes.keys()]) if (minute <= current - HOUR_MINUTES) this.minutes.delete(minute);

    const result = new Map(backlog);
    for (const byDestination of this.minutes.values()) {
      for (const [key, { transport, destination, count }] of byDestination) {
        let counts = result.get(key);
        if (!counts) result.set(key, (counts = emptyCounts(transport, destination)));
        counts.publishedLastHour += count;
      }
    }
    for (const [key, counts] of result) {
      counts.publishedLastMinute = lastMinute.get(key) ?? 0;
      const at = this.lastPublished.get(key);
      counts.lastPublishedAgoMs = at === undefined || counts.publishedLastHour === 0 ? null : Math.max(0, readAt - at);
    }
    for (const key of this.lastPublished.keys()) if (!result.has(key)) this.lastPublished.delete(key);
    return [...result.values()];
  }
}

function emptyCounts(transport: string, destination: string): DestinationCounts {
  return {
    transport, destination, pending: 0, inFlight: 0, retrying: 0, dead: 0,
    publishedLastMinute: 0, publishedLastHour: 0, oldestPendingAgeMs: null, lastPublishedAgoMs: null,
  };
}

// Drivers return SUM() as bigint text (pg), decimal text (mysql2) or numbers (SQLite).
function backlogCounts(row: Record<string, unknown>): Pick<DestinationCounts, 'pending' | 'inFlight' | 'retrying' | 'dead' | 'oldestPendingAgeMs'> {
  const count = (value: unknown) => Number(value ?? 0);
  return {
    pending: count(row.pending),
    inFlight: count(row.inFlight),
    retrying: count(row.retrying),
    dead: count(row.dead),
    oldestPendingAgeMs: milliseconds(row.oldestPendingAgeMs),
  };
}

function milliseconds(value: unknown): number | null {
  return value === null || value === undefined ? null : Math.max(0, Math.round(Number(value)));
}
