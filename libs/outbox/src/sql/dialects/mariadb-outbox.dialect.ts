import { ERROR_LIMITS } from '../../core/message-limits';
import type { NewOutboxMessage } from '../../core/outbox-message';
import type { FailedDelivery } from '../../core/outbox-store.port';
import { claimedColumns, type AggregateLockStatement, INSERT_COLUMNS, insertValues, valuesTuple, holdingStatuses, EVENT_COLUMNS, type DialectOptions, type OutboxTableDialect } from './outbox-sql.dialect';
import type { SqlStatement } from '../../core/sql-connection.port';
import { claimRunsWith } from './claim-runs.sql';
import { requeued } from './due-time.sql';
import { createPayloadTable, dropPayloadTable } from '../claim-check/payload-table.sql';
import { createPausedTable, dropPausedTable, notPaused, pausedColumnsReadable } from './paused-destinations.sql';
import { OutboxTable, type OutboxTableLocation } from './outbox-table';
import { createLockTable, dropLockTable, lockBuckets, lockBucketsStatement, lockTableReadable } from './aggregate-lock-buckets.sql';

// The history keeps the latest attempts: the oldest entry makes room once it is full.
const keepLatestErrors = `IF(JSON_LENGTH(COALESCE(error_history, '[]')) >= ${ERROR_LIMITS.historyEntries},
  JSON_REMOVE(COALESCE(error_history, '[]'), '$[0]'), COALESCE(error_history, '[]'))`;

const list = (count: number) => Array(count).fill('?').join(', ');
const AFTER_MS = (param = '?') => `NOW(3) + INTERVAL (${param} * 1000) MICROSECOND`;
const BEFORE_MS = `NOW(3) - INTERVAL (? * 1000) MICROSECOND`;

/**
 * MariaDB / MySQL. Without UPDATE … RETURNING, a claim is a short transaction: pick candidates
 * with a plain read, lock those still free with FOR UPDATE SKIP LOCKED, keep of each aggregate's
 * run the rows before the first one it could not lock, lease them, read them back. The ordering
 * rule is evaluated by the plain read on purpose: a locking read would skip an earlier row another
 * relay has locked, and so let a later row of its aggregate through.
 */
export class MariaDbOutboxDialect implements OutboxTableDialect {
  readonly name = 'mariadb';
  private readonly table: OutboxTable;
  private readonly t: string;

  /** A schema is refused: on MariaDB/MySQL it would be another database, which the DataSource's `database` chooses. */
  constructor(
    table: string | OutboxTableLocation | OutboxTable,
    private readonly options: DialectOptions = {},
  ) {
    this.table = OutboxTable.on('mariadb', table);
    this.t = this.table.quoted('mariadb');
  }

  insert(messages: NewOutboxMessage[]): SqlStatement {
    const row = valuesTuple(() => '?', (param) => AFTER_MS(param));
    return {
      sql: `INSERT INTO ${this.t} (${INSERT_COLUMNS.join(', ')}) VALUES ${messages.map(() => row).join(', ')}`,
      params: messages.flatMap((message) => insertValues(message, message.occurredAt.toISOString())),
    };
  }

  lockAggregates(keys: string[]): AggregateLockStatement {
    // Row locks on the buckets of `<table>_locks`, which InnoDB releases at commit or rollback.
    const buckets = lockBuckets(keys);
    return { ...lockBucketsStatement(this.table, buckets), expectedRows: buckets.length, lockTable: this.table.locks.toString() };
  }

  /** The rows a claim would take, with their keys, from a plain (non-locking) read; see claim-runs.sql.ts. */
  candidates(limit: number): SqlStatement {
    const runs = claimRunsWith({
      table: this.t,
      now: 'NOW(3)',
      holding: holdingStatuses(this.options.deadLetterPolicy),
      notPaused: notPaused('m.destination', this.table, 'mariadb'),
      limit: '?',
    });
    return { sql: `${runs} SELECT position, aggregate_type, aggregate_id, transport, destination FROM claimable_runs ORDER BY position`, params: [limit] };
  }

  lockFree(positions: string[]): SqlStatement {
    return {
      sql: `SELECT position FROM ${this.t}
            WHERE position IN (${list(positions.length)}) AND status = 'pending'
              AND (lease_expires_at IS NULL OR lease_expires_at <= NOW(3))
            FOR UPDATE SKIP LOCKED`,
      params: positions,
    };
  }

  lease(owner: string, token: string, leaseMs: number, positions: string[]): SqlStatement {
    return {
      sql: `UPDATE ${this.t} SET lease_owner = ?, lease_token = ?, lease_expires_at = ${AFTER_MS()}, attempts = attempts + 1
            WHERE position IN (${list(positions.length)})`,
      params: [owner, token, leaseMs, ...positions],
    };
  }

  fetch(positions: string[]): SqlStatement {
    return { sql: `SELECT ${claimedColumns()} FROM ${this.t} WHERE position IN (${list(positions.length)}) ORDER BY position`, params: positions };
  }

  markPublished(token: string, positions: string[]): SqlStatement {
    const where = `position IN (${list(positions.length)}) AND lease_token = ? AND status = 'pending'`;
    return this.options.deleteOnPublish
      ? { sql: `DELETE FROM ${this.t} WHERE ${where}`, params: [...positions, token] }
      : {
          sql: `UPDATE ${this.t} SET status = 'published', published_at = NOW(3), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
                WHERE ${where}`,
          params: [...positions, token],
        };
  }

  markFailed(token: string, failure: FailedDelivery): SqlStatement {
    const dead = failure.retryInMs === null;
    return {
      sql: `UPDATE ${this.t} SET last_error = ?, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
              error_history = JSON_ARRAY_APPEND(${keepLatestErrors}, '$', JSON_OBJECT('at', DATE_FORMAT(NOW(3), '%Y-%m-%dT%H:%i:%s.%fZ'), 'error', ?)),
              status = ?, dead_at = ${dead ? 'NOW(3)' : 'NULL'}, next_attempt_at = ${dead ? 'NULL' : AFTER_MS()}
            WHERE position = ? AND lease_token = ? AND status = 'pending'`,
      params: [failure.error, failure.error, dead ? 'dead' : 'pending', ...(dead ? [] : [failure.retryInMs]), failure.position, token],
    };
  }

  giveBack(token: string, positions: string[]): SqlStatement {
    return {
      sql: `UPDATE ${this.t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = GREATEST(attempts - 1, 0)
            WHERE position IN (${list(positions.length)}) AND lease_token = ? AND status = 'pending'`,
      params: [...positions, token],
    };
  }

  release(owner: string): SqlStatement {
    return {
      sql: `UPDATE ${this.t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = GREATEST(attempts - 1, 0)
            WHERE lease_owner = ? AND status = 'pending'`,
      params: [owner],
    };
  }

  listDead(after: string, limit: number): SqlStatement {
    return {
      sql: `SELECT position AS position, id AS id, event_type AS type, event_version AS version, aggregate_type AS aggregateType,
              aggregate_id AS aggregateId, transport AS transport, destination AS destination, attempts AS attempts,
              last_error AS lastError, error_history AS errorHistory, occurred_at AS occurredAt, dead_at AS deadAt
            FROM ${this.t} WHERE status = 'dead' AND position > ? ORDER BY position LIMIT ?`,
      params: [after, limit],
    };
  }

  setDeadStatus(id: string, requeue: boolean): SqlStatement {
    return {
      sql: requeue
        ? `UPDATE ${this.t} SET ${requeued('NOW(3)')} WHERE id = ? AND status = 'dead'`
        : `UPDATE ${this.t} SET status = 'discarded' WHERE id = ? AND status = 'dead'`,
      params: [id],
    };
  }

  statusOf(id: string): SqlStatement {
    return { sql: `SELECT status FROM ${this.t} WHERE id = ?`, params: [id] };
  }

  deleteSettled(kind: 'published' | 'dead', olderThanMs: number, limit: number): SqlStatement {
    const condition = kind === 'published' ? `status = 'published' AND published_at < ${BEFORE_MS}` : `status IN ('dead', 'discarded') AND dead_at < ${BEFORE_MS}`;
    return { sql: `DELETE FROM ${this.t} WHERE ${condition} ORDER BY position LIMIT ?`, params: [olderThanMs, limit] };
  }

  probe(): SqlStatement {
    return { sql: `SELECT position FROM ${this.t} WHERE 1 = 0 AND ${notPaused('destination', this.table, 'mariadb')} AND ${pausedColumnsReadable(this.table, 'mariadb')} AND ${lockTableReadable(this.table)}`, params: [] };
  }

  createTable(): string[] {
    const t = this.t;
    const part = (suffix: string) => this.table.quotedPart(suffix, 'mariadb');
    return [
      `CREATE TABLE ${t} (
        position bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
        id char(36) NOT NULL,
        ${EVENT_COLUMNS}
        occurred_at varchar(30) NOT NULL,
        correlation_id varchar(255) NULL,
        causation_id varchar(255) NULL,
        tenant_id varchar(255) NULL,
        headers longtext NOT NULL,
        payload longtext NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts int NOT NULL DEFAULT 0,
        last_error text NULL,
        error_history longtext NULL,
        next_attempt_at datetime(3) NULL,
        lease_owner varchar(64) NULL,
        lease_token varchar(36) NULL,
        lease_expires_at datetime(3) NULL,
        created_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        published_at datetime(3) NULL,
        dead_at datetime(3) NULL,
        UNIQUE KEY ${part('id_key')} (id),
        KEY ${part('status_idx')} (status, position),
        KEY ${part('aggregate_idx')} (aggregate_type(100), aggregate_id(150), transport, destination(100), position),
        KEY ${part('published_idx')} (status, published_at),
        KEY ${part('dead_idx')} (status, dead_at),
        CONSTRAINT ${part('status_check')} CHECK (status IN ('pending', 'published', 'dead', 'discarded'))
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      createPausedTable(this.table, 'mariadb'),
      // Claim-checked payloads (option claimCheck): written with their rows, removed by the same cleanup.
      ...createPayloadTable(this.table, 'mariadb'),
      ...createLockTable(this.table),
    ];
  }

  dropTable(): string[] {
    return [`DROP TABLE IF EXISTS ${this.t}`, dropPausedTable(this.table, 'mariadb'), dropLockTable(this.table), dropPayloadTable(this.table, 'mariadb')];
  }
}
