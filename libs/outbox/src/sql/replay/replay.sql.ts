import type { ReplayFilter, ReplayHold } from '../../core/replay/replay.port';
import type { SqlStatement } from '../../core/sql-connection.port';
import { ConsoleSql, NOW, Params, type ConsoleDialect } from '../console/console.sql';
import type { OutboxTable } from '../dialects/outbox-table';

const KEY_COLUMNS = ['aggregate_type', 'aggregate_id', 'transport', 'destination'];

/**
 * The replay's statements on PostgreSQL, SQLite and MariaDB (see OutboxReplay for the two steps).
 * Filters are the console's, limited to published rows; every value is a parameter.
 */
export class ReplaySql {
  private readonly t: string;
  private readonly console: ConsoleSql;

  constructor(
    private readonly dialect: ConsoleDialect,
    table: OutboxTable,
  ) {
    this.t = table.quoted(dialect);
    this.console = new ConsoleSql(dialect, table);
  }

  countPublished(filter: ReplayFilter): SqlStatement {
    return this.console.count({ ...filter, status: 'published' });
  }

  countHeld(owner: string): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `SELECT count(*) AS "count" FROM ${this.t} WHERE status = 'pending' AND lease_owner = ${params.add(owner)}`, params: params.values };
  }

  statusOf(id: string): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `SELECT status AS "status" FROM ${this.t} WHERE id = ${params.add(id, this.dialect === 'postgres' ? '::uuid' : '')}`, params: params.values };
  }

  /** PostgreSQL and SQLite: one statement takes a batch of published rows and holds them. */
  holdBatch(filter: ReplayFilter, hold: ReplayHold, after: string, limit: number): SqlStatement {
    const params = new Params(this.dialect);
    // SQLite's placeholders are positional: the SET's values come first, as in the text.
    const set = this.holdSet(hold, params);
    const batch = this.publishedBatch(filter, after, limit, params);
    return this.changeIn(batch, set, `status = 'published'`, params);
  }

  /** PostgreSQL and SQLite: releases a batch of held rows whose aggregate has nothing in flight. */
  releaseBatch(owner: string, after: string, limit: number): SqlStatement {
    const params = new Params(this.dialect);
    const batch = this.heldBatch(owner, after, limit, params);
    return this.changeIn(batch, RELEASE, `lease_owner = ${params.add(owner)}`, params);
  }

  /** MariaDB, step 1 of a hold (in a transaction): lock a batch of published rows. */
  lockPublished(filter: ReplayFilter, after: string, limit: number): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `${this.publishedBatch(filter, after, limit, params)} FOR UPDATE SKIP LOCKED`, params: params.values };
  }

  /** MariaDB, step 1 of a release: lock a batch of held rows whose aggregate has nothing in flight. */
  lockHeld(owner: string, after: string, limit: number): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `${this.heldBatch(owner, after, limit, params)} FOR UPDATE SKIP LOCKED`, params: params.values };
  }

  /** MariaDB, step 2: hold the locked rows. */
  holdPositions(hold: ReplayHold, positions: string[]): SqlStatement {
    const params = new Params(this.dialect);
    const set = this.holdSet(hold, params);
    return { sql: `UPDATE ${this.t} SET ${set} WHERE position IN (${positions.map((p) => params.add(p)).join(', ')}) AND status = 'published'`, params: params.values };
  }

  /** MariaDB, step 2: release the locked rows. */
  releasePositions(owner: string, positions: string[]): SqlStatement {
    const params = new Params(this.dialect);
    const where = `position IN (${positions.map((p) => params.add(p)).join(', ')}) AND lease_owner = ${params.add(owner)}`;
    return { sql: `UPDATE ${this.t} SET ${RELEASE} WHERE ${where}`, params: params.values };
  }

  // Pending again, as if just written, except that the replay's lease holds it and its headers say
  // that it is a replay. The id, position, destination, payload and error history are kept. Due
  // from now, as a requeued row (see dueSince): the lag counts from the replay, not the first insert.
  private holdSet(hold: ReplayHold, params: Params): string {
    const owner = params.add(hold.owner);
    const token = params.add(hold.replayId);
    const until = this.later(params, hold.holdMs);
    const headers = this.merged(params.add(JSON.stringify(hold.headers)));
    return `status = 'pending', attempts = 0, next_attempt_at = ${NOW[this.dialect]}, published_at = NULL, dead_at = NULL,
      lease_owner = ${owner}, lease_token = ${token}, lease_expires_at = ${until}, headers = ${headers}`;
  }

  private publishedBatch(filter: ReplayFilter, after: string, limit: number, params: Params): string {
    const where = this.console.where({ ...filter, status: 'published' }, params);
    where.push(`position > ${params.add(this.console.position(after))}`);
    return `SELECT position FROM ${this.t} WHERE ${where.join(' AND ')} ORDER BY position LIMIT ${params.add(limit)}`;
  }

  // Held rows of this replay, oldest first, leaving out aggregates (and destinations) where a relay
  // holds another row in flight: released now, a held row could go out before or beside it.
  private heldBatch(owner: string, after: string, limit: number, params: Params): string {
    const now = NOW[this.dialect];
    const same = KEY_COLUMNS.map((column) => `l.${column} = m.${column}`).join(' AND ');
    // Parameters in the order of the text: SQLite's and MariaDB's placeholders are positional.
    const held = `m.status = 'pending' AND m.lease_owner = ${params.add(owner)} AND m.position > ${params.add(this.console.position(after))}`;
    const inFlight = `SELECT 1 FROM ${this.t} l WHERE ${same} AND l.status = 'pending' AND l.lease_expires_at > ${now} AND l.lease_owner <> ${params.add(owner)}`;
    return `SELECT m.position FROM ${this.t} m WHERE ${held} AND NOT EXISTS (${inFlight}) ORDER BY m.position LIMIT ${params.add(limit)}`;
  }

  private changeIn(batch: string, set: string, still: string, params: Params): SqlStatement {
    if (this.dialect === 'postgres') {
      // A materialized CTE, as the console's bulk changes: the LIMIT then bounds the statement.
      return {
        sql: `WITH batch AS MATERIALIZED (${batch} FOR UPDATE SKIP LOCKED)
              UPDATE ${this.t} AS m SET ${set} FROM batch WHERE m.position = batch.position AND m.${still}
              RETURNING m.position AS position`,
        params: params.values,
      };
    }
    return { sql: `UPDATE ${this.t} SET ${set} WHERE position IN (${batch}) AND ${still} RETURNING position`, params: params.values };
  }

  // The database's clock, as the relay's lease checks read it.
  private later(params: Params, ms: number): string {
    if (this.dialect === 'postgres') return `now() + ${params.add(ms)}::int * interval '1 millisecond'`;
    if (this.dialect === 'mariadb') return `NOW(3) + INTERVAL ${params.add(ms * 1_000)} MICROSECOND`;
    return `strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || ${params.add(ms / 1_000)} || ' seconds')`;
  }

  // The replay's headers over the stored ones (a JSON object kept as text).
  private merged(patch: string): string {
    if (this.dialect === 'postgres') return `(COALESCE(headers, '{}')::jsonb || ${patch}::jsonb)::text`;
    if (this.dialect === 'mariadb') return `JSON_MERGE_PATCH(COALESCE(headers, '{}'), ${patch})`;
    return `json_patch(COALESCE(headers, '{}'), ${patch})`;
  }
}

const RELEASE = 'lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL';
