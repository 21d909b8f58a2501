import type { SqlStatement } from '../core/sql-connection.port';
import type { OutboxTable } from './dialects/outbox-table';
import type { SqlRunner } from '../core/sql-connection.port';

// How long a table that is missing (an app in the table mode) is taken as missing before asking again.
const MISSING_RECHECK_MS = 60_000;

/**
 * Messages the WAL stream published have no row: the stream counts them per minute, transport and
 * destination in `<table>_wal_published`, written with its saved position (one short transaction
 * per acknowledged batch at most), so that the stats, the console's chart and throughput, the CLI's
 * `status` and the pause's "is this destination known" check count streamed traffic as they count
 * published rows. Counts older than RETENTION are deleted as new ones are written.
 */
export class StreamedCounts {
  static readonly RETENTION = `interval '2 days'`;
  private checkedAt: number | undefined;
  private present = false;

  constructor(
    private readonly table: OutboxTable,
    private readonly runner: SqlRunner,
    private readonly now: () => number = Date.now,
  ) {}

  /** The table's DDL, run by the WAL mode's set-up (idempotent). */
  static createStatement(table: OutboxTable): string {
    return `CREATE TABLE IF NOT EXISTS ${table.walPublished.quoted()} (
      minute timestamptz NOT NULL, transport varchar(255) NOT NULL, destination varchar(255) NOT NULL,
      published integer NOT NULL, last_published_at timestamptz NOT NULL,
      PRIMARY KEY (minute, transport, destination))`;
  }

  /** Adds counts ($1 transports, $2 destinations, $3 counts) to the current minute, by the database's clock. */
  static addStatement(table: OutboxTable): string {
    return `INSERT INTO ${table.walPublished.quoted()} AS c (minute, transport, destination, published, last_published_at)
      SELECT date_trunc('minute', now()), t, d, n, now() FROM unnest($1::text[], $2::text[], $3::int[]) AS u(t, d, n)
      ON CONFLICT (minute, transport, destination) DO UPDATE SET published = c.published + excluded.published, last_published_at = excluded.last_published_at`;
  }

  static pruneStatement(table: OutboxTable): string {
    return `DELETE FROM ${table.walPublished.quoted()} WHERE minute < now() - ${StreamedCounts.RETENTION}`;
  }

  /**
   * Whether this database has streamed counts (PostgreSQL, where the WAL mode ran): asked once, and
   * again at most once a minute while the answer is no (an instance may switch to the WAL mode).
   */
  async exist(): Promise<boolean> {
    if (this.present) return true;
    if (this.checkedAt !== undefined && this.now() - this.checkedAt < MISSING_RECHECK_MS) return false;
    this.checkedAt = this.now();
    const [row] = await this.runner.rows({ sql: `SELECT to_regclass($1) IS NOT NULL AS "present"`, params: [this.table.walPublished.quoted()] });
    this.present = row?.present === true || row?.present === 't';
    return this.present;
  }

  /** Whether any streamed message named this destination (in the retained counts). */
  destinationUsed(destination: string): SqlStatement {
    return { sql: `SELECT 1 AS "used" FROM ${this.table.walPublished.quoted()} WHERE destination = $1 LIMIT 1`, params: [destination] };
  }

  /** Streamed messages per minute over the last `minutes` minutes, in the shape of the console's throughput rows. */
  throughput(minutes: number): SqlStatement {
    return {
      sql: `SELECT minute AS "minute", sum(published)::int AS "published" FROM ${this.table.walPublished.quoted()}
            WHERE minute > now() - $1 * interval '1 minute' - interval '1 minute' GROUP BY 1 ORDER BY 1`,
      params: [minutes],
    };
  }
}
