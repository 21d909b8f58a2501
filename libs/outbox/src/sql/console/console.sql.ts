import type { MessageFilter } from '../../core/console/outbox-console.port';
import type { SqlStatement } from '../../core/sql-connection.port';
import { requeued } from '../dialects/due-time.sql';
import type { OutboxTable } from '../dialects/outbox-table';

export type ConsoleDialect = 'postgres' | 'sqlite' | 'mariadb';

/** The paused destinations with when and why; shared by the console and the stats (health, metrics, CLI `status`). */
export function pausedListStatement(quotedPausedTable: string): SqlStatement {
  return {
    sql: `SELECT destination AS "destination", paused_at AS "pausedAt", reason AS "reason" FROM ${quotedPausedTable} ORDER BY destination`,
    params: [],
  };
}

const SUMMARY = `position AS "position", id AS "id", event_type AS "type", aggregate_type AS "aggregateType",
  aggregate_id AS "aggregateId", transport AS "transport", destination AS "destination", status AS "status",
  attempts AS "attempts", last_error AS "lastError", occurred_at AS "occurredAt", created_at AS "createdAt",
  published_at AS "publishedAt", dead_at AS "deadAt"`;

const DETAIL = `${SUMMARY}, event_version AS "version", correlation_id AS "correlationId", causation_id AS "causationId",
  tenant_id AS "tenantId", headers AS "headers", payload AS "payload", error_history AS "errorHistory",
  next_attempt_at AS "nextAttemptAt", lease_owner AS "leaseOwner", lease_expires_at AS "leaseExpiresAt"`;

const DISCARD = `status = 'discarded'`;

/** What a bulk change does, and the state a row must still be in when it is changed. */
export type ConsoleChange = 'requeue' | 'discard' | 'retry-now';

export const NOW: Record<ConsoleDialect, string> = {
  postgres: 'now()',
  // SQLite keeps times as UTC text 'YYYY-MM-DD HH:MM:SS.SSS', which compares correctly as text.
  sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now')`,
  mariadb: 'NOW(3)',
};

/**
 * In backoff: pending, failed at least once, its next attempt later than now, and no relay holding
 * it. A delayed delivery (attempts 0) is not in backoff: "retry now" never publishes it early.
 */
const inBackoff = (now: string) =>
  `status = 'pending' AND attempts > 0 AND next_attempt_at IS NOT NULL AND next_attempt_at > ${now} AND (lease_expires_at IS NULL OR lease_expires_at <= ${now})`;

/** Collects parameters and hands out the dialect's placeholders in order. */
export class Params {
  readonly values: unknown[] = [];
  constructor(private readonly dialect: ConsoleDialect) {}

  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return this.dialect === 'postgres' ? `$${this.values.length}${cast}` : '?';
  }
}

/**
 * The console's statements on PostgreSQL, SQLite and MariaDB. Filters become parameters, never text.
 * SQLite keeps times as UTC text 'YYYY-MM-DD HH:MM:SS.SSS', and MariaDB as datetime(3) in the
 * session's time zone (UTC assumed), so time bounds are given in that form there.
 */
export class ConsoleSql {
  private readonly t: string;
  private readonly paused: string;

  constructor(
    private readonly dialect: ConsoleDialect,
    table: OutboxTable,
  ) {
    this.t = table.quoted(dialect);
    this.paused = table.paused.quoted(dialect);
  }

  list(filter: MessageFilter, before: string | null, limit: number): SqlStatement {
    const params = new Params(this.dialect);
    const where = this.where(filter, params);
    if (before !== null) where.push(`position < ${params.add(this.position(before))}`);
    return {
      sql: `SELECT ${SUMMARY} FROM ${this.t} WHERE ${where.join(' AND ')} ORDER BY position DESC LIMIT ${params.add(limit)}`,
      params: params.values,
    };
  }

  get(id: string): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `SELECT ${DETAIL} FROM ${this.t} WHERE id = ${params.add(id, this.uuidCast)}`, params: params.values };
  }

  count(filter: MessageFilter): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `SELECT count(*) AS "count" FROM ${this.t} WHERE ${this.where(filter, params).join(' AND ')}`, params: params.values };
  }

  requeueBatch(filter: MessageFilter, after: string, limit: number): SqlStatement {
    return this.changeBatch('requeue', filter, after, limit);
  }

  discardBatch(filter: MessageFilter, after: string, limit: number): SqlStatement {
    return this.changeBatch('discard', filter, after, limit);
  }

  /** Rows in backoff → due now (`next_attempt_at` = now); attempts and error history are kept. */
  retryNowBatch(filter: MessageFilter, after: string, limit: number): SqlStatement {
    return this.changeBatch('retry-now', { ...filter, retrying: true }, after, limit);
  }

  /** Whether any row, in any status, names this destination. */
  destinationUsed(destination: string): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `SELECT 1 AS "used" FROM ${this.t} WHERE destination = ${params.add(destination)} LIMIT 1`, params: params.values };
  }

  throughput(minutes: number): SqlStatement {
    if (this.dialect === 'mariadb') {
      return {
        sql: `SELECT DATE_FORMAT(published_at, '%Y-%m-%d %H:%i') AS "minute", count(*) AS "published" FROM ${this.t}
              WHERE status = 'published' AND published_at > NOW(3) - INTERVAL ? MINUTE GROUP BY 1 ORDER BY 1`,
        params: [minutes],
      };
    }
    if (this.dialect === 'postgres') {
      return {
        sql: `SELECT date_trunc('minute', published_at) AS "minute", count(*) AS "published" FROM ${this.t}
              WHERE status = 'published' AND published_at > now() - $1 * interval '1 minute' GROUP BY 1 ORDER BY 1`,
        params: [minutes],
      };
    }
    return {
      sql: `SELECT substr(published_at, 1, 16) AS "minute", count(*) AS "published" FROM ${this.t}
            WHERE status = 'published' AND published_at > strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || ? || ' minutes') GROUP BY 1 ORDER BY 1`,
      params: [minutes],
    };
  }

  pausedList(): SqlStatement {
    return pausedListStatement(this.paused);
  }

  pause(destination: string, reason: string | null): SqlStatement {
    const params = new Params(this.dialect);
    return {
      sql: `INSERT INTO ${this.paused} (destination, reason) VALUES (${params.add(destination)}, ${params.add(reason)}) ON CONFLICT DO NOTHING RETURNING destination`,
      params: params.values,
    };
  }

  /** MariaDB has no INSERT … ON CONFLICT … RETURNING: the affected-row count says whether it was new. */
  pauseIgnoring(destination: string, reason: string | null): SqlStatement {
    return { sql: `INSERT IGNORE INTO ${this.paused} (destination, reason) VALUES (?, ?)`, params: [destination, reason] };
  }

  resumeCounting(destination: string): SqlStatement {
    return { sql: `DELETE FROM ${this.paused} WHERE destination = ?`, params: [destination] };
  }

  /** MariaDB's bulk batch, step 1 (in a transaction): lock at most `limit` dead rows past `after`. */
  lockBatch(filter: MessageFilter, after: string, limit: number): SqlStatement {
    const params = new Params(this.dialect);
    const where = this.where(filter, params);
    where.push(`position > ${params.add(after)}`);
    return {
      sql: `SELECT position FROM ${this.t} WHERE ${where.join(' AND ')} ORDER BY position LIMIT ${params.add(limit)} FOR UPDATE SKIP LOCKED`,
      params: params.values,
    };
  }

  /** Step 2: change the locked rows (those still in the state the change needs). */
  changePositions(kind: ConsoleChange, positions: string[]): SqlStatement {
    const { set, still } = this.change(kind);
    return { sql: `UPDATE ${this.t} SET ${set} WHERE position IN (${positions.map(() => '?').join(', ')}) AND ${still('')}`, params: positions };
  }

  resume(destination: string): SqlStatement {
    const params = new Params(this.dialect);
    return { sql: `DELETE FROM ${this.paused} WHERE destination = ${params.add(destination)} RETURNING destination`, params: params.values };
  }

  // One bounded statement: at most `limit` dead rows past `after`, oldest first. SKIP LOCKED on
  // PostgreSQL so that a bulk action never waits on a row someone else is changing.
  private changeBatch(kind: ConsoleChange, filter: MessageFilter, after: string, limit: number): SqlStatement {
    const { set, still } = this.change(kind);
    const params = new Params(this.dialect);
    const where = this.where(filter, params);
    where.push(`position > ${params.add(this.position(after))}`);
    const batch = `SELECT position FROM ${this.t} WHERE ${where.join(' AND ')} ORDER BY position LIMIT ${params.add(limit)}`;
    if (this.dialect === 'postgres') {
      // A materialized CTE, not IN (sub-select): PostgreSQL may run a locking sub-select once per
      // outer row, and then the LIMIT bounds nothing (measured: 1,000 rows in one statement).
      return {
        sql: `WITH batch AS MATERIALIZED (${batch} FOR UPDATE SKIP LOCKED)
              UPDATE ${this.t} AS m SET ${set} FROM batch WHERE m.position = batch.position AND ${still('m.')}
              RETURNING m.position AS position`,
        params: params.values,
      };
    }
    return {
      sql: `UPDATE ${this.t} SET ${set} WHERE position IN (${batch}) AND ${still('')} RETURNING position`,
      params: params.values,
    };
  }

  /** The filter's conditions (always at least one, `1 = 1`), its values added to `params`. Shared with the replay's statements. */
  where(filter: MessageFilter, params: Params): string[] {
    const where = ['1 = 1'];
    const equal = (column: string, value: string | undefined, cast = '') => {
      if (value !== undefined) where.push(`${column} = ${params.add(value, cast)}`);
    };
    equal('status', filter.status);
    equal('event_type', filter.type);
    equal('aggregate_type', filter.aggregateType);
    equal('aggregate_id', filter.aggregateId);
    equal('destination', filter.destination);
    equal('id', filter.id, this.uuidCast);
    if (filter.from) where.push(`created_at >= ${params.add(this.time(filter.from), this.timeCast)}`);
    if (filter.to) where.push(`created_at < ${params.add(this.time(filter.to), this.timeCast)}`);
    if (filter.retrying) where.push(inBackoff(NOW[this.dialect]));
    return where;
  }

  // The SET of a change, and the condition (on a row alias) that the row still qualifies when changed.
  private change(kind: ConsoleChange): { set: string; still: (alias: string) => string } {
    const now = NOW[this.dialect];
    if (kind === 'retry-now') {
      return { set: `next_attempt_at = ${now}`, still: (alias) => `${alias}status = 'pending' AND ${alias}next_attempt_at > ${now}` };
    }
    return { set: kind === 'requeue' ? requeued(NOW[this.dialect]) : DISCARD, still: (alias) => `${alias}status = 'dead'` };
  }

  private get uuidCast(): string {
    return this.dialect === 'postgres' ? '::uuid' : '';
  }

  private get timeCast(): string {
    return this.dialect === 'postgres' ? '::timestamptz' : '';
  }

  // SQLite's text and MariaDB's datetime(3) both take 'YYYY-MM-DD HH:MM:SS.SSS'.
  time(value: Date): string {
    return this.dialect === 'postgres' ? value.toISOString() : value.toISOString().replace('T', ' ').replace('Z', '');
  }

  position(value: string): string | number {
    return this.dialect === 'postgres' ? value : Number(value);
  }
}
