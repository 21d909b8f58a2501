import type { SqlStatement } from '../../core/sql-connection.port';
import { OutboxTable, type OutboxTableLocation } from './outbox-table';

/**
 * The WAL mode's rows (`wal.write: 'row'`) carry a lease no table relay ever takes: this owner, until
 * the end of time. The stream publishes them from their decoded inserts and deletes them once the
 * broker acknowledged them; whenever a slot is made anew (it never saw them) the lease is let go and
 * the table relay publishes them as any pending row, in position order.
 */
export const STREAM_OWNER = 'nest-outbox:wal-stream';

/** The columns and values a writer adds to a stream-owned row's INSERT (PostgreSQL). */
export const STREAM_OWNED_COLUMNS = { columns: 'lease_owner, lease_expires_at', values: `'${STREAM_OWNER}', 'infinity'::timestamptz` } as const;

/**
 * Whether a statement's snapshot sees the transactions of a `$n::bigint[]` of decoded 32-bit ids (see
 * `visibleInSnapshot`, wal/): PostgreSQL sends a commit to the stream a moment before other sessions
 * see it, and a statement that ran in that moment would find none of its rows.
 */
export type VisibilityCheck = (xids: string) => string;

/** The statements of stream-owned rows, on one outbox table. */
export class StreamOwnedRows {
  private readonly t: string;

  constructor(location: string | OutboxTableLocation | OutboxTable) {
    this.t = OutboxTable.on('postgres', location).quoted();
  }

  /**
   * Published and acknowledged: gone. A row the stream let go meanwhile belongs to the table relay
   * and stays. Returns one row, `visible`: whether the statement's snapshot saw every inserting
   * transaction (`xids`); when not, some rows were not there to delete yet, and it is run again.
   */
  settle(rows: ReadonlyArray<{ position: string; xid: number }>, visible: VisibilityCheck): SqlStatement {
    return {
      sql: `WITH gone AS (DELETE FROM ${this.t} WHERE position = ANY($1::bigint[]) AND lease_owner = $2 RETURNING 1)
            SELECT ${visible('$3')} AS visible, (SELECT count(*) FROM gone)::int AS settled`,
      params: [rows.map((row) => row.position), STREAM_OWNER, rows.map((row) => row.xid)],
    };
  }

  /**
   * Every stream-owned row goes to the table relay: run when a slot was made that never decoded them
   * (the first slot, one recreated after a drop, an invalidation or a failover), and by a table-mode
   * start after a switch from the WAL mode. Returns the number of rows let go (`released`).
   */
  releaseAll(): SqlStatement {
    return {
      sql: `WITH released AS (UPDATE ${this.t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
              WHERE lease_owner = $1 AND status = 'pending' RETURNING 1) SELECT count(*)::int AS released FROM released`,
      params: [STREAM_OWNER],
    };
  }

  /**
   * Of these rows, the positions still the stream's to publish (`owned`, as JSON text); the others
   * were let go to the table relay, or published and deleted. One row, with `visible` as `settle`
   * has it: a row whose insert the snapshot does not see yet would look gone, so it is run again.
   */
  stillOwned(rows: ReadonlyArray<{ position: string; xid: number }>, visible: VisibilityCheck): SqlStatement {
    return {
      sql: `SELECT ${visible('$3')} AS visible,
              (SELECT coalesce(json_agg(position::text), '[]')::text FROM ${this.t} WHERE position = ANY($1::bigint[]) AND lease_owner = $2 AND status = 'pending') AS owned`,
      params: [rows.map((row) => row.position), STREAM_OWNER, rows.map((row) => row.xid)],
    };
  }

  /**
   * These rows go to the table relay, due after `retryInMs`, charged with the attempts the stream made
   * and its error: what the stream could not publish now, and what it held behind it. Returns
   * `visible` as `settle` does: a row not yet visible was not let go, and it is run again.
   */
  release(rows: ReadonlyArray<{ position: string; xid: number; attempts: number; error: string }>, retryInMs: number, visible: VisibilityCheck): SqlStatement {
    return {
      sql: `WITH released AS (UPDATE ${this.t} AS m SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = f.attempts, last_error = f.error,
              error_history = CASE WHEN f.attempts > 0 THEN jsonb_build_array(jsonb_build_object('at', now(), 'error', f.error))::text END,
              next_attempt_at = CASE WHEN $4::double precision > 0 THEN now() + $4::double precision * interval '1 millisecond' END
            FROM unnest($1::bigint[], $2::int[], $3::text[]) AS f(position, attempts, error)
            WHERE m.position = ANY($1::bigint[]) AND m.position = f.position AND m.lease_owner = $5 RETURNING 1)
            SELECT ${visible('$6')} AS visible, (SELECT count(*) FROM released)::int AS released`,
      params: [rows.map((row) => row.position), rows.map((row) => row.attempts), rows.map((row) => row.error), retryInMs, STREAM_OWNER, rows.map((row) => row.xid)],
    };
  }

  /**
   * The table relay's index of its own pending rows, made by the WAL mode's set-up: its claims
   * (which say `notStreamOwned`) then never walk the stream's rows in flight, thousands while the
   * broker is slow. The table mode's claims use the pending rows' index, where there are none.
   */
  static relayIndexDdl(location: string | OutboxTableLocation | OutboxTable): string {
    const table = OutboxTable.on('postgres', location);
    return `CREATE INDEX IF NOT EXISTS ${table.quotedPart('relay_pending_idx')} ON ${table.quoted()} (position) WHERE status = 'pending' AND ${StreamOwnedRows.notStreamOwned()}`;
  }

  /** The condition that leaves stream-owned rows out of what holds an aggregate (`row`: the table's alias, or ''). */
  static notStreamOwned(row = ''): string {
    return `${row}lease_owner IS DISTINCT FROM '${STREAM_OWNER}'`;
  }
}
