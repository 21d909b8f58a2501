import type { SqlStatement } from '../../core/sql-connection.port';
import { requeued } from './due-time.sql';
import type { OutboxTable } from './outbox-table';
import type { ResolvedPartitioning } from '../../core/partitioning/outbox-partitioning';
import { defaultPartition } from '../partitions/partitioned-table.sql';

/** Statements for operators and cleanup, apart from the relay's hot path. */
export interface OutboxMaintenanceSql {
  /** Dead rows after `afterPosition`, oldest first. */
  listDead(afterPosition: string, limit: number): SqlStatement;
  /** Dead → pending with fresh attempts; returns the row when it was dead. */
  requeue(id: string): SqlStatement;
  /** Dead → discarded; returns the row when it was dead. */
  discard(id: string): SqlStatement;
  statusOf(id: string): SqlStatement;
  /** Deletes up to `limit` rows settled before `olderThanMs` ago, oldest first. */
  deletePublished(olderThanMs: number, limit: number): SqlStatement;
  deleteDead(olderThanMs: number, limit: number): SqlStatement;
}

const DEAD_COLUMNS = `position AS "position", id AS "id", event_type AS "type", event_version AS "version",
  aggregate_type AS "aggregateType", aggregate_id AS "aggregateId", transport AS "transport", destination AS "destination",
  attempts AS "attempts", last_error AS "lastError", error_history AS "errorHistory", occurred_at AS "occurredAt", dead_at AS "deadAt"`;

export class PostgresMaintenanceSql implements OutboxMaintenanceSql {
  private readonly t: string;
  /** A partitioned table: the DEFAULT partition, and the interval that decides which partitions are dropped whole. */
  private readonly partitioned?: { defaultPartition: string; interval: string };

  constructor(table: OutboxTable, partitioning?: ResolvedPartitioning) {
    this.t = table.quoted('postgres');
    if (partitioning !== undefined) this.partitioned = { defaultPartition: defaultPartition(table).quoted(), interval: partitioning.interval };
  }

  listDead(afterPosition: string, limit: number): SqlStatement {
    return {
      sql: `SELECT ${DEAD_COLUMNS} FROM ${this.t} WHERE status = 'dead' AND position > $1 ORDER BY position LIMIT $2`,
      params: [afterPosition, limit],
    };
  }

  requeue(id: string): SqlStatement {
    return {
      sql: `UPDATE ${this.t} SET ${requeued('now()')} WHERE id = $1::uuid AND status = 'dead' RETURNING position`,
      params: [id],
    };
  }

  discard(id: string): SqlStatement {
    return { sql: `UPDATE ${this.t} SET status = 'discarded' WHERE id = $1::uuid AND status = 'dead' RETURNING position`, params: [id] };
  }

  statusOf(id: string): SqlStatement {
    return { sql: `SELECT status FROM ${this.t} WHERE id = $1::uuid`, params: [id] };
  }

  deletePublished(olderThanMs: number, limit: number): SqlStatement {
    const condition = `status = 'published' AND published_at < now() - $1 * interval '1 millisecond'`;
    if (this.partitioned === undefined) return this.deleteSettled(condition, olderThanMs, limit);
    // Partitions are dropped whole once past retention, so rows are deleted one by one only where no
    // drop will come: in the DEFAULT partition, and in partitions that ended before the cutoff's
    // interval yet were kept for a pending or dead row (the bound on created_at lets PostgreSQL leave
    // every other partition out when the statement starts). Rows of a partition within retention wait for its drop.
    const { defaultPartition, interval } = this.partitioned;
    const pick = (from: string, extra: string) => `SELECT position FROM ${from} WHERE ${condition}${extra} ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED`;
    return {
      sql: `WITH in_default AS (${pick(defaultPartition, '')}),
              in_expired AS (${pick(this.t, ` AND created_at < date_trunc('${interval}', now() - $1 * interval '1 millisecond', 'UTC')`)})
            DELETE FROM ${this.t} WHERE position IN (SELECT position FROM in_default UNION ALL SELECT position FROM in_expired)
            RETURNING position`,
      params: [olderThanMs, limit],
    };
  }

  deleteDead(olderThanMs: number, limit: number): SqlStatement {
    return this.deleteSettled(`status IN ('dead', 'discarded') AND dead_at < now() - $1 * interval '1 millisecond'`, olderThanMs, limit);
  }

  // SKIP LOCKED and a small LIMIT: cleanup never waits on, or long blocks, the relay and writers.
  private deleteSettled(condition: string, olderThanMs: number, limit: number): SqlStatement {
    return {
      sql: `DELETE FROM ${this.t} WHERE position IN (
              SELECT position FROM ${this.t} WHERE ${condition} ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING position`,
      params: [olderThanMs, limit],
    };
  }
}

const SQLITE_AGO = `strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (? / 1000.0) || ' seconds')`;

export class SqliteMaintenanceSql implements OutboxMaintenanceSql {
  private readonly t: string;

  constructor(table: OutboxTable) {
    this.t = table.quoted('sqlite');
  }

  listDead(afterPosition: string, limit: number): SqlStatement {
    return {
      sql: `SELECT ${DEAD_COLUMNS} FROM ${this.t} WHERE status = 'dead' AND position > ? ORDER BY position LIMIT ?`,
      params: [Number(afterPosition), limit],
    };
  }

  requeue(id: string): SqlStatement {
    return {
      sql: `UPDATE ${this.t} SET ${requeued(`strftime('%Y-%m-%d %H:%M:%f', 'now')`)} WHERE id = ? AND status = 'dead' RETURNING position`,
      params: [id],
    };
  }

  discard(id: string): SqlStatement {
    return { sql: `UPDATE ${this.t} SET status = 'discarded' WHERE id = ? AND status = 'dead' RETURNING position`, params: [id] };
  }

  statusOf(id: string): SqlStatement {
    return { sql: `SELECT status FROM ${this.t} WHERE id = ?`, params: [id] };
  }

  deletePublished(olderThanMs: number, limit: number): SqlStatement {
    return this.deleteSettled(`status = 'published' AND published_at < ${SQLITE_AGO}`, olderThanMs, limit);
  }

  deleteDead(olderThanMs: number, limit: number): SqlStatement {
    return this.deleteSettled(`status IN ('dead', 'discarded') AND dead_at < ${SQLITE_AGO}`, olderThanMs, limit);
  }

  private deleteSettled(condition: string, olderThanMs: number, limit: number): SqlStatement {
    return {
      sql: `DELETE FROM ${this.t} WHERE position IN (
              SELECT position FROM ${this.t} WHERE ${condition} ORDER BY position LIMIT ?)
            RETURNING position`,
      params: [olderThanMs, limit],
    };
  }
}
