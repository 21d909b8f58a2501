import type { SqlRunner, SqlStatement } from '../core/sql-connection.port';
import { errorText } from '../core/error-text';
import type { OutboxTable } from './dialects/outbox-table';

/** Rows settled (published, failed, dead) between two looks at the table's statistics. */
const CHECK_EVERY_ROWS = 1_000;

/**
 * PostgreSQL: keeps the outbox table's planner statistics current while a backlog drains.
 *
 * Why: the claim looks up the first unpublished row of each key in position order. With statistics
 * taken while a burst was still pending, the planner believes nearly every row is unpublished and
 * walks the primary key from the start, filtering on key and status, instead of the
 * unpublished-aggregate index — so on a few busy keys each claim walks past every row published
 * since (10 keys, 20,000 rows: claims from 29 ms to 115 ms; 1 key: the same). Autovacuum refreshes
 * the statistics only after 10 % of the table changed and its next round (a minute by default),
 * after the burst. The relay sees the change as it makes it: every CHECK_EVERY_ROWS settled rows it
 * reads the table's count of changes since the last ANALYZE, and runs ANALYZE when they pass a
 * tenth of its rows (or the table never had statistics). ANALYZE reads a sample (30,000 rows at the
 * default statistics target), takes no lock that writers or relays wait for, and replaces the plans
 * PostgreSQL cached for the prepared claim.
 *
 * Only the table's owner (or a superuser) may ANALYZE it; for any other role this is off, said once.
 */
export class PlannerStatistics {
  private settledSinceCheck = 0;
  private checking = false;
  private off = false;

  constructor(
    private readonly runner: SqlRunner,
    private readonly table: OutboxTable,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  /** Counts settled rows; every CHECK_EVERY_ROWS, looks at the statistics in the background. */
  noteSettled(rows: number): void {
    if (this.off) return;
    this.settledSinceCheck += rows;
    if (this.settledSinceCheck < CHECK_EVERY_ROWS || this.checking) return;
    this.settledSinceCheck = 0;
    this.checking = true;
    void this.refreshIfStale()
      .catch((error: unknown) => this.log(`Outbox table "${this.table}": could not refresh its planner statistics (${errorText(error)}); autovacuum still does.`))
      .finally(() => (this.checking = false));
  }

  /** Runs ANALYZE when the statistics are missing or older than a tenth of the table's changes; resolves whether it did. */
  async refreshIfStale(): Promise<boolean> {
    const [state] = await this.runner.rows(staleness(this.table));
    if (!state) return false;
    if (!state.mayAnalyze) {
      this.off = true;
      this.log(
        `Outbox table "${this.table}" is not owned by this role, so the relay cannot refresh its planner statistics after a burst; ` +
          'autovacuum does, a minute or more later. Claims on a few busy keys may slow down until then.',
      );
      return false;
    }
    if (!state.stale) return false;
    await this.runner.rows({ sql: `ANALYZE ${this.table.quoted('postgres')}`, params: [] });
    return true;
  }
}

function staleness(table: OutboxTable): SqlStatement {
  return {
    sql: `SELECT (c.reltuples < 0 OR coalesce(s.n_mod_since_analyze, 0) > 1000 + 0.2 * c.reltuples) AS "stale",
             (pg_has_role(c.relowner, 'USAGE') OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)) AS "mayAnalyze"
          FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
          WHERE c.oid = $1::regclass`,
    params: [table.quoted('postgres')],
  };
}
