import type { SqlRunner, SqlStatement } from '../core/sql-connection.port';
import { errorText } from '../core/error-text';
import type { OutboxTable } from './dialects/outbox-table';

/** Rows settled (published, failed, dead) between two looks at the table's statistics. */
const CHECK_EVERY_ROWS = 1_000;

/**
 * A claim slower than this makes the relay look at the statistics at once: a claim of 100 rows
 * takes a few milliseconds on a good plan, and one planned on missing or stale statistics walks the
 * whole backlog (20,000 pending: 130 ms; P9 in BENCHMARKS.md).
 */
const SLOW_CLAIM_MS = 50;

/**
 * After a slow claim, pending rows counted up to this many (a walk of the pending index that stops
 * there, a few milliseconds): as many or more where the statistics count fewer than a tenth of that
 * is a backlog they do not know.
 */
const PENDING_SAMPLE = 1_000;

/**
 * The first claim waits at most this long for its look: ANALYZE waits behind anything else that
 * holds the table's SHARE UPDATE EXCLUSIVE lock (a VACUUM, CREATE INDEX CONCURRENTLY) for as long.
 */
const FIRST_LOOK_WAIT_MS = 2_000;

/** Slow claims on fresh statistics (a busy database) look again at most this often. */
const SLOW_CLAIM_LOOK_EVERY_MS = 5_000;

/**
 * PostgreSQL: keeps the outbox table's planner statistics current while a backlog drains.
 *
 * Why: the claim walks the pending rows in position order and stops after a batch, and looks up the
 * first unpublished row of each key. Planned on statistics that do not know the backlog — a table
 * never analyzed, or analyzed while it was empty or small — PostgreSQL expects few pending rows and
 * reads them all, checks each one's key, and sorts them, on every claim (20,000 pending: 130 ms a
 * claim against 5 ms); with statistics taken while a burst was still pending it walks the primary
 * key past every row published since. Autovacuum refreshes the statistics only after 10 % of the
 * table changed and its next round (a minute by default), after the burst. So the relay looks at
 * them itself: before its first claim (and waits for the ANALYZE this takes, up to
 * FIRST_LOOK_WAIT_MS, so that a relay started on a backlog does not claim on a plan that reads it
 * all), after any claim slower than SLOW_CLAIM_MS (a burst arriving while it runs), and every
 * CHECK_EVERY_ROWS settled rows. A look reads the table's count of changes since the last ANALYZE
 * and its size, and runs ANALYZE when the changes pass a fifth of its rows or its size doubled
 * since (or the table never had statistics). After a slow claim it also runs ANALYZE when the
 * statistics do not know the backlog: PENDING_SAMPLE rows or more pending where they count fewer
 * than a tenth as many. A burst into a table that keeps a long history of published rows changes far less than
 * a fifth of it: 50,000 new rows after 1,000,000 relayed, analyzed when none was pending, were
 * claimed at 300 ms a batch. ANALYZE reads a sample (30,000 rows at the default
 * statistics target), takes no lock that writers or relays wait for, and replaces the plans
 * PostgreSQL cached for the prepared claim. A partitioned table is analyzed beside the first claim
 * rather than before it: ANALYZE then reads every partition.
 *
 * Only the table's owner (or a superuser) may ANALYZE it; for any other role this is off, said
 * once.
 */
export class PlannerStatistics {
  private settledSinceCheck = 0;
  private checking = false;
  private off = false;
  private firstLook?: Promise<void>;
  private lastSlowLookAt = -Infinity;
  /** The table's count of changed rows right after this relay's last ANALYZE. */
  private changedAfterAnalyze = 0;

  constructor(
    private readonly runner: SqlRunner,
    private readonly table: OutboxTable,
    private readonly log: (message: string) => void = () => undefined,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Resolves once the statistics were looked at before the first claim (refreshed if missing or
   * stale), or after FIRST_LOOK_WAIT_MS with the look going on beside the claims; never rejects.
   */
  beforeClaim(): Promise<void> {
    this.firstLook ??= this.firstLookWithin(FIRST_LOOK_WAIT_MS);
    return this.firstLook;
  }

  /** A claim that took `ms`: a slow one looks at the statistics in the background. */
  noteClaim(ms: number): void {
    if (this.off || ms < SLOW_CLAIM_MS || this.now() - this.lastSlowLookAt < SLOW_CLAIM_LOOK_EVERY_MS) return;
    if (this.look({ afterSlowClaim: true })) this.lastSlowLookAt = this.now();
  }

  /** Counts settled rows; every CHECK_EVERY_ROWS, looks at the statistics in the background. */
  noteSettled(rows: number): void {
    if (this.off) return;
    this.settledSinceCheck += rows;
    if (this.settledSinceCheck >= CHECK_EVERY_ROWS) this.look();
  }

  /**
   * Runs ANALYZE when the statistics are missing, or older than a fifth of the table's changes or a doubling of its size,
   * or (`afterSlowClaim`) do not know the backlog; resolves whether it did. `waitForAnalyze` false: resolves once the
   * ANALYZE started (it runs on).
   */
  async refreshIfStale({
    waitForAnalyze = () => true,
    afterSlowClaim = false,
  }: { waitForAnalyze?: (state: TableState) => boolean; afterSlowClaim?: boolean } = {}): Promise<boolean> {
    const [state] = (await this.runner.rows(staleness(this.table, this.changedAfterAnalyze, afterSlowClaim))) as unknown as TableState[];
    if (!state) return false;
    if (!state.mayAnalyze) {
      this.off = true;
      this.log(
        `Outbox table "${this.table}" is not owned by this role, so the relay cannot refresh its planner statistics after a burst; ` +
          'autovacuum does, a minute or more later. Claims on a backlog may take far longer until then.',
      );
      return false;
    }
    if (!state.stale) return false;
    const analyzed = this.analyze();
    if (waitForAnalyze(state)) await analyzed;
    else void analyzed.catch((error: unknown) => this.couldNotRefresh(error));
    return true;
  }

  private async analyze(): Promise<void> {
    await this.runner.rows({ sql: `ANALYZE ${this.table.quoted('postgres')} (${PLANNED_COLUMNS.join(', ')})`, params: [] });
    // Some PostgreSQL versions keep the count of changed rows after an ANALYZE of some columns:
    // count from where it stands now.
    const [after] = (await this.runner.rows(staleness(this.table, 0))) as unknown as TableState[];
    this.changedAfterAnalyze = Number(after?.changed ?? 0);
  }

  private firstLookWithin(ms: number): Promise<void> {
    this.checking = true;
    const look = this.refreshIfStale({ waitForAnalyze: (state) => !state.partitioned })
      .then(
        () => undefined,
        (error: unknown) => this.couldNotRefresh(error),
      )
      .finally(() => (this.checking = false));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref?.();
    });
    return Promise.race([look, waited]).finally(() => clearTimeout(timer));
  }

  /** One look at a time, in the background; false when one is already under way. */
  private look({ afterSlowClaim = false } = {}): boolean {
    if (this.checking) return false;
    this.settledSinceCheck = 0;
    this.checking = true;
    void this.refreshIfStale({ afterSlowClaim })
      .catch((error: unknown) => this.couldNotRefresh(error))
      .finally(() => (this.checking = false));
    return true;
  }

  private couldNotRefresh(error: unknown): void {
    this.log(`Outbox table "${this.table}": could not refresh its planner statistics (${errorText(error)}); autovacuum still does.`);
  }
}

interface TableState {
  stale: boolean;
  mayAnalyze: boolean;
  partitioned: boolean;
  changed: string | number;
}

/**
 * The columns the relay's statements filter, join and order on. ANALYZE of these alone skips the
 * payloads and headers a whole-table one reads: on a table of 40,000 rows being drained, 108–147 ms
 * against 151–187 ms, several times per drain.
 */
const PLANNED_COLUMNS = ['position', 'status', 'aggregate_type', 'aggregate_id', 'transport', 'destination', 'next_attempt_at', 'lease_expires_at', 'published_at', 'dead_at'];

function staleness(table: OutboxTable, changedAfterAnalyze: number, afterSlowClaim = false): SqlStatement {
  const quoted = table.quoted('postgres');
  return {
    // The count of changed rows reaches pg_stat_user_tables up to ten seconds late (each backend
    // reports when idle, at most once a second); the table's size on disk is current at once.
    // The pending rows the statistics count: the share of 'pending' among the status column's most
    // common values (none listed: none seen) times the rows.
    sql: `SELECT (c.reltuples < 0 OR s.changed - (CASE WHEN s.changed >= $2 THEN $2 ELSE 0 END) > 1000 + 0.2 * c.reltuples
               OR pg_relation_size(c.oid) > (2 * c.relpages + 64) * current_setting('block_size')::bigint
               OR ($3::boolean AND (SELECT count(*) FROM (SELECT 1 FROM ${quoted} WHERE status = 'pending' LIMIT ${PENDING_SAMPLE}) AS p) >= ${PENDING_SAMPLE}
                 AND 10 * c.reltuples * coalesce((
                   SELECT m.freq FROM pg_stats st CROSS JOIN LATERAL unnest(st.most_common_vals::text::text[], st.most_common_freqs) AS m(value, freq)
                   WHERE st.schemaname = n.nspname AND st.tablename = c.relname AND st.attname = 'status' AND m.value = 'pending' LIMIT 1), 0) < ${PENDING_SAMPLE})) AS "stale",
             (pg_has_role(c.relowner, 'USAGE') OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)) AS "mayAnalyze",
             c.relkind = 'p' AS "partitioned", s.changed AS "changed"
          FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace
          CROSS JOIN LATERAL (SELECT coalesce((SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relid = c.oid), 0) AS changed) s
          WHERE c.oid = $1::regclass`,
    params: [quoted, changedAfterAnalyze, afterSlowClaim],
  };
}
