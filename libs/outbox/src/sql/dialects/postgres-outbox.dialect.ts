import { ERROR_LIMITS } from '../../core/message-limits';
import type { NewOutboxMessage } from '../../core/outbox-message';
import type { FailedDelivery } from '../../core/outbox-store.port';
import { BaseOutboxDialect, claimedColumns, INSERT_COLUMNS, insertValues, valuesTuple, holdingStatuses, EVENT_COLUMNS, partialIndexes, type DialectOptions, type InsertOptions, type OutboxSqlDialect } from './outbox-sql.dialect';
import type { SqlStatement } from '../../core/sql-connection.port';
import { claimRunsWith } from './claim-runs.sql';
import { createPayloadTable, dropPayloadTable } from '../claim-check/payload-table.sql';
import { createPausedTable, dropPausedTable, notPaused } from './paused-destinations.sql';
import type { OutboxTable, OutboxTableLocation } from './outbox-table';
import { resolvePartitioning, type ResolvedPartitioning } from '../../core/partitioning/outbox-partitioning';
import { partitionedTableDdl } from '../partitions/partitioned-table.sql';
import { OUTBOX_STORAGE } from './postgres-storage';
import { STREAM_OWNED_COLUMNS } from './stream-owned-rows.sql';

/** The PostgreSQL types of INSERT_COLUMNS, as the table has them (the delay of `next_attempt_at` is a number of milliseconds). */
const COLUMN_TYPES: Record<number, string> = Object.fromEntries(
  INSERT_COLUMNS.map((column, index) => [index, ({ id: 'uuid', event_version: 'integer', occurred_at: 'timestamptz', headers: 'text', payload: 'text', next_attempt_at: 'double precision' } as Record<string, string>)[column] ?? 'varchar']),
);

/** The columns after `position`, the same in the plain and the partitioned table. */
const COLUMNS = `        id uuid NOT NULL,
        ${EVENT_COLUMNS}
        occurred_at timestamptz NOT NULL,
        correlation_id varchar(255),
        causation_id varchar(255),
        tenant_id varchar(255),
        headers text NOT NULL DEFAULT '{}',
        payload text NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        error_history text,
        next_attempt_at timestamptz,
        lease_owner varchar(64),
        lease_token varchar(36),
        lease_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz,
        dead_at timestamptz`;

/**
 * `status = 'pending'` for the statements that find their rows by position (settle, fail, give
 * back), in a form PostgreSQL cannot match to the partial indexes on status. With statistics taken
 * while every row was published (any ANALYZE at a quiet time: the usual state of an outbox), the
 * planner costs a walk of such an index at one row and took it over the primary key, so each settle
 * of a burst read the whole backlog (115 ms a batch of 100 with 50,000 rows pending, against under
 * 1 ms). `IS NOT DISTINCT FROM` means the same on this NOT NULL column, and the planner's proof that
 * a partial index applies does not look through it. For the same reason the failure's update names
 * its positions as a list too: joined only with its reasons, it was planned as a scan of the table.
 */
const stillPending = (row = '') => `${row}status IS NOT DISTINCT FROM 'pending'`;

/** PostgreSQL: claims with FOR UPDATE SKIP LOCKED so that relays never wait on each other's rows. */
export class PostgresOutboxDialect extends BaseOutboxDialect implements OutboxSqlDialect {
  readonly name = 'postgres';
  protected readonly sql: Record<'claim' | 'markPublished' | 'settleAndClaim' | 'markFailed' | 'giveBack' | 'release', string>;

  private readonly notifyChannel?: string;
  private readonly partitioning?: ResolvedPartitioning;

  /** `notifyChannel`: when set, an insert also notifies it (unless told not to), delivered by PostgreSQL at commit. */
  constructor(table: string | OutboxTableLocation | OutboxTable, options: DialectOptions = {}) {
    super(table);
    this.notifyChannel = options.notifyChannel;
    this.partitioning = options.partitioning === undefined ? undefined : resolvePartitioning(options.partitioning);
    const t = this.table.quoted();
    const claimRuns = () => ({
      table: t,
      now: 'now()',
      holding: holdingStatuses(options.deadLetterPolicy),
      notPaused: notPaused('m.destination', this.table),
      limit: '$2',
      lock: 'FOR UPDATE OF m SKIP LOCKED',
      postgres: true,
    });
    const leaseRuns = `UPDATE ${t} AS m
        SET lease_owner = $1, lease_token = $4, lease_expires_at = now() + $3 * interval '1 millisecond', attempts = m.attempts + 1
        FROM claimable_runs r WHERE m.position = r.position
        RETURNING ${claimedColumns('m')}`;
    const markPublished = (token: string, positions: string) =>
      options.deleteOnPublish
        ? `DELETE FROM ${t} WHERE position = ANY(${positions}::bigint[]) AND lease_token = ${token} AND ${stillPending()} RETURNING position`
        : // A last error with no error history is the WAL mode's note of why it moved the row to the
          // table ("Held because …"), not a failure: it goes once the row is out. Failures stay.
          `UPDATE ${t} SET status = 'published', published_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
             last_error = CASE WHEN error_history IS NULL THEN NULL ELSE last_error END
           WHERE position = ANY(${positions}::bigint[]) AND lease_token = ${token} AND ${stillPending()}
           RETURNING position`;
    this.sql = {
      claim: `${claimRunsWith(claimRuns())}
        ${leaseRuns}`,
      markPublished: markPublished('$1', '$2'),
      // The previous batch's settle and the next claim in one statement and one round trip: a busy
      // aggregate's next run is leased at the moment its previous one is marked published.
      settleAndClaim: `${claimRunsWith({ ...claimRuns(), settledFirst: { step: `settled AS (${markPublished('$5', '$6')})`, attempted: '$6::bigint[]' } })},
        claimed AS (${leaseRuns})
        SELECT (SELECT count(*) FROM settled) AS "settledCount", c.* FROM (SELECT 1) AS one LEFT JOIN claimed AS c ON true`,
      markFailed: `
        UPDATE ${t} AS m SET last_error = f.error, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
          error_history = jsonb_path_query_array(COALESCE(m.error_history, '[]')::jsonb || jsonb_build_array(jsonb_build_object('at', now(), 'error', f.error)),
            '$[last - ${ERROR_LIMITS.historyEntries - 1} to last]')::text,
          status = CASE WHEN f.retry_ms IS NULL THEN 'dead' ELSE 'pending' END,
          dead_at = CASE WHEN f.retry_ms IS NULL THEN now() ELSE NULL END,
          next_attempt_at = CASE WHEN f.retry_ms IS NULL THEN NULL ELSE now() + f.retry_ms * interval '1 millisecond' END
        FROM unnest($2::bigint[], $3::text[], $4::bigint[]) AS f(position, error, retry_ms)
        WHERE m.position = ANY($2::bigint[]) AND m.position = f.position AND m.lease_token = $1 AND ${stillPending('m.')}
        RETURNING m.position`,
      giveBack: `
        UPDATE ${t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = GREATEST(attempts - 1, 0)
        WHERE position = ANY($2::bigint[]) AND lease_token = $1 AND ${stillPending()}
        RETURNING position`,
      release: `
        UPDATE ${t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = GREATEST(attempts - 1, 0)
        WHERE lease_owner = $1 AND status = 'pending'
        RETURNING position`,
    };
  }

  readonly locksInInsert = true;

  insert(messages: NewOutboxMessage[], options: InsertOptions = {}): SqlStatement {
    const width = INSERT_COLUMNS.length;
    const locking = options.lockKeys !== undefined && options.lockKeys.length > 0;
    // Rows joined with the lock step are typed by their VALUES list, not by the target columns.
    const placeholder = (row: number) => (column: number) => `$${row * width + column + 1}${locking ? `::${COLUMN_TYPES[column]}` : ''}`;
    const owned = options.streamOwned === true;
    const tuple = (row: number) => valuesTuple(placeholder(row), (param) => `now() + ${param}::double precision * interval '1 millisecond'`);
    const rows = messages.map((_, row) => (owned && !locking ? `${tuple(row).slice(0, -1)}, ${STREAM_OWNED_COLUMNS.values})` : tuple(row)));
    const params: unknown[] = messages.flatMap((message) => insertValues(message, message.occurredAt));
    const columns = INSERT_COLUMNS.join(', ');
    const target = owned ? `${columns}, ${STREAM_OWNED_COLUMNS.columns}` : columns;
    const steps: string[] = [];
    let insert = `INSERT INTO ${this.table.quoted()} (${target}) VALUES ${rows.join(', ')}`;
    if (locking) {
      // The aggregates' advisory locks in the insert's own round trip, in a fixed order so that two
      // writers never deadlock. Every row to insert is joined with the (one-row) lock step, so no row
      // reaches the table, and draws its position, before all the locks are held.
      params.push([...new Set(options.lockKeys)].sort());
      steps.push(
        `locked AS MATERIALIZED (SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) AS n FROM (SELECT k FROM unnest($${params.length}::text[]) AS k ORDER BY k) AS keys)`,
      );
      insert = `INSERT INTO ${this.table.quoted()} (${target}) SELECT v.*${owned ? `, ${STREAM_OWNED_COLUMNS.values}` : ''} FROM (VALUES ${rows.join(', ')}) AS v (${columns}) CROSS JOIN locked`;
    }
    // The stream reads its rows from the WAL: no relay needs waking.
    const notify = this.notifyChannel !== undefined && options.notify !== false && !owned;
    if (!notify && !locking) return { sql: insert, params };
    if (!notify) return { sql: `WITH ${steps.join(', ')} ${insert}`, params };
    // One round trip: the notification rides on the insert and is only delivered if it commits.
    params.push(this.notifyChannel);
    steps.push(`inserted AS (${insert} RETURNING position)`);
    return { sql: `WITH ${steps.join(', ')} SELECT pg_notify($${params.length}, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row`, params };
  }

  lockAggregates(keys: string[]): SqlStatement {
    // Transaction-scoped advisory locks, taken in a fixed order so that two writers never deadlock.
    return { sql: `SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k ORDER BY k`, params: [keys] };
  }

  claim(owner: string, token: string, limit: number, leaseMs: number): SqlStatement {
    return { sql: this.sql.claim, params: [owner, limit, leaseMs, token] };
  }

  markPublished(token: string, positions: string[]): SqlStatement {
    return { sql: this.sql.markPublished, params: [token, positions] };
  }

  /** Marks `positions` of claim `settledToken` published and claims as `claim` would with them published: rows `{ settledCount, …claimed row }`, one row with null columns when nothing was claimed. */
  settleAndClaim(settledToken: string, positions: string[], owner: string, token: string, limit: number, leaseMs: number): SqlStatement {
    return { sql: this.sql.settleAndClaim, params: [owner, limit, leaseMs, token, settledToken, positions] };
  }

  giveBack(token: string, positions: string[]): SqlStatement {
    return { sql: this.sql.giveBack, params: [token, positions] };
  }

  markFailed(token: string, failures: FailedDelivery[]): SqlStatement {
    return {
      sql: this.sql.markFailed,
      params: [token, failures.map((f) => f.position), failures.map((f) => f.error), failures.map((f) => f.retryInMs)],
    };
  }

  createTable(): string[] {
    const t = this.table.quoted();
    const part = (suffix: string) => this.table.quotedPart(suffix);
    const table = this.partitioning
      ? partitionedTableDdl(this.table, COLUMNS, this.partitioning)
      : [
          `CREATE TABLE ${t} (
        position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
${COLUMNS},
        CONSTRAINT ${part('id_key')} UNIQUE (id),
        CONSTRAINT ${part('status_check')} CHECK (status IN ('pending', 'published', 'dead', 'discarded'))) WITH (${OUTBOX_STORAGE})`,
        ];
    return [
      // The schema is made if missing, never dropped: it may hold other tables.
      ...(this.table.schema === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS "${this.table.schema}"`]),
      ...table,
      // On a partitioned table each index is made on every partition, present and future.
      ...partialIndexes(t, part),
      // Destinations an operator paused; read by every claim.
      createPausedTable(this.table, 'postgres'),
      // Claim-checked payloads (option claimCheck): written with their rows, removed by the same cleanup.
      ...createPayloadTable(this.table, 'postgres'),
    ];
  }

  override dropTable(): string[] {
    return [...super.dropTable(), dropPausedTable(this.table, 'postgres'), dropPayloadTable(this.table, 'postgres')];
  }
}
