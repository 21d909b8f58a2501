import { ERROR_LIMITS } from '../../core/message-limits';
import type { NewOutboxMessage } from '../../core/outbox-message';
import type { FailedDelivery } from '../../core/outbox-store.port';
import { BaseOutboxDialect, claimedColumns, INSERT_COLUMNS, insertValues, valuesTuple, holdingStatuses, EVENT_COLUMNS, partialIndexes, type DialectOptions, type OutboxSqlDialect } from './outbox-sql.dialect';
import type { SqlStatement } from '../../core/sql-connection.port';
import { claimRunsWith } from './claim-runs.sql';
import { createPayloadTable, dropPayloadTable } from '../claim-check/payload-table.sql';
import { createPausedTable, dropPausedTable, notPaused } from './paused-destinations.sql';
import { OutboxTable, type OutboxTableLocation } from './outbox-table';

// The history keeps the latest attempts: the oldest entry makes room once it is full.
const keepLatestErrors = `CASE WHEN json_array_length(COALESCE(error_history, '[]')) >= ${ERROR_LIMITS.historyEntries}
  THEN json_remove(COALESCE(error_history, '[]'), '$[0]') ELSE COALESCE(error_history, '[]') END`;

// Times are UTC text with milliseconds, which compares correctly as text.
const NOW = `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
const NOW_PLUS_MS = `strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (? / 1000.0) || ' seconds')`;

/** SQLite: writers are serialized by the database, so one UPDATE … RETURNING is an atomic claim. */
export class SqliteOutboxDialect extends BaseOutboxDialect implements OutboxSqlDialect {
  readonly name = 'sqlite';
  protected readonly sql: Record<'claim' | 'markPublished' | 'markFailed' | 'giveBack' | 'release', string>;

  constructor(table: string | OutboxTableLocation | OutboxTable, options: DialectOptions = {}) {
    super(OutboxTable.on('better-sqlite3', table));
    const t = this.table.quoted('sqlite');
    this.sql = {
      claim: `${claimRunsWith({
        table: t,
        now: NOW,
        holding: holdingStatuses(options.deadLetterPolicy),
        notPaused: notPaused('m.destination', this.table, 'sqlite'),
        limit: '?',
      })}
        UPDATE ${t}
        SET lease_owner = ?, lease_token = ?, lease_expires_at = ${NOW_PLUS_MS}, attempts = attempts + 1
        WHERE position IN (SELECT position FROM claimable_runs)
        RETURNING ${claimedColumns()}`,
      markPublished: options.deleteOnPublish
        ? `DELETE FROM ${t} WHERE position IN (SELECT value FROM json_each(?)) AND lease_token = ? AND status = 'pending' RETURNING position`
        : `UPDATE ${t} SET status = 'published', published_at = ${NOW}, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
           WHERE position IN (SELECT value FROM json_each(?)) AND lease_token = ? AND status = 'pending'
           RETURNING position`,
      // One statement for the whole batch: the failures come as a JSON array of [position, error, retryMs].
      markFailed: `
        WITH f AS (
          SELECT value ->> '$[0]' AS position, value ->> '$[1]' AS error, value ->> '$[2]' AS retry_ms FROM json_each(?))
        UPDATE ${t} SET
          last_error = (SELECT f.error FROM f WHERE f.position = ${t}.position),
          lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
          error_history = json_insert(${keepLatestErrors}, '$[#]',
            json_object('at', ${NOW}, 'error', (SELECT f.error FROM f WHERE f.position = ${t}.position))),
          status = CASE WHEN (SELECT f.retry_ms FROM f WHERE f.position = ${t}.position) IS NULL THEN 'dead' ELSE 'pending' END,
          dead_at = CASE WHEN (SELECT f.retry_ms FROM f WHERE f.position = ${t}.position) IS NULL THEN ${NOW} ELSE NULL END,
          next_attempt_at = (SELECT CASE WHEN f.retry_ms IS NULL THEN NULL
            ELSE strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (f.retry_ms / 1000.0) || ' seconds') END FROM f WHERE f.position = ${t}.position)
        WHERE position IN (SELECT position FROM f) AND lease_token = ? AND status = 'pending'
        RETURNING position`,
      giveBack: `
        UPDATE ${t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = max(attempts - 1, 0)
        WHERE position IN (SELECT value FROM json_each(?)) AND lease_token = ? AND status = 'pending'
        RETURNING position`,
      release: `
        UPDATE ${t} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = max(attempts - 1, 0)
        WHERE lease_owner = ? AND status = 'pending'
        RETURNING position`,
    };
  }

  insert(messages: NewOutboxMessage[]): SqlStatement {
    const row = valuesTuple(() => '?', (param) => `strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (${param} / 1000.0) || ' seconds')`);
    return {
      sql: `INSERT INTO ${this.table.quoted('sqlite')} (${INSERT_COLUMNS.join(', ')}) VALUES ${messages.map(() => row).join(', ')}`,
      params: messages.flatMap((message) => insertValues(message, message.occurredAt.toISOString())),
    };
  }

  lockAggregates(): undefined {
    // SQLite has one writer at a time: a transaction that wrote holds the database until it ends.
    return undefined;
  }

  claim(owner: string, token: string, limit: number, leaseMs: number): SqlStatement {
    return { sql: this.sql.claim, params: [limit, owner, token, leaseMs] };
  }

  markPublished(token: string, positions: string[]): SqlStatement {
    return { sql: this.sql.markPublished, params: [JSON.stringify(positions.map(Number)), token] };
  }

  giveBack(token: string, positions: string[]): SqlStatement {
    return { sql: this.sql.giveBack, params: [JSON.stringify(positions.map(Number)), token] };
  }

  markFailed(token: string, failures: FailedDelivery[]): SqlStatement {
    const rows = failures.map((f) => [Number(f.position), f.error, f.retryInMs]);
    return { sql: this.sql.markFailed, params: [JSON.stringify(rows), token] };
  }

  createTable(): string[] {
    const t = this.table.quoted('sqlite');
    const part = (suffix: string) => this.table.quotedPart(suffix, 'sqlite');
    return [
      `CREATE TABLE ${t} (
        position integer PRIMARY KEY AUTOINCREMENT,
        id varchar(36) NOT NULL UNIQUE,
        ${EVENT_COLUMNS}
        occurred_at varchar(30) NOT NULL,
        correlation_id varchar(255),
        causation_id varchar(255),
        tenant_id varchar(255),
        headers text NOT NULL DEFAULT '{}',
        payload text NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'published', 'dead', 'discarded')),
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        error_history text,
        next_attempt_at varchar(30),
        lease_owner varchar(64),
        lease_token varchar(36),
        lease_expires_at varchar(30),
        created_at varchar(30) NOT NULL DEFAULT (${NOW}),
        published_at varchar(30),
        dead_at varchar(30))`,
      ...partialIndexes(t, part),
      createPausedTable(this.table, 'sqlite'),
      // Claim-checked payloads (option claimCheck): written with their rows, removed by the same cleanup.
      ...createPayloadTable(this.table, 'sqlite'),
    ];
  }

  override dropTable(): string[] {
    return [...super.dropTable(), dropPausedTable(this.table, 'sqlite'), dropPayloadTable(this.table, 'sqlite')];
  }
}
