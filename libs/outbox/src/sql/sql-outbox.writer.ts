import type { OutboxMessageFactory } from '../core/outbox-message.factory';
import { toDraft, type OutboxMessageInput } from '../core/outbox-message-input';
import type { NewOutboxMessage } from '../core/outbox-message';
// The table dialects are plain SQL text builders; they move to this folder with the stores.
import type { OutboxTableDialect } from './dialects/outbox-sql.dialect';
import { OutboxTable, type OutboxTableLocation } from './dialects/outbox-table';
import { PostgresOutboxDialect } from './dialects/postgres-outbox.dialect';
import { SqliteOutboxDialect } from './dialects/sqlite-outbox.dialect';
import { MariaDbOutboxDialect } from './dialects/mariadb-outbox.dialect';
import { lockAggregates } from './aggregate-locks';
import { aggregateKey } from './aggregate-key';
import { WAL_EMIT_STATEMENT } from './wal-emit.statement';
import { encodeWalRecord } from '../core/stream/wal-record';
import type { SqlDialectName, SqlTransaction } from './sql-transaction.port';

// Keeps each INSERT well below the bind-parameter limits of every supported database.
const ROWS_PER_INSERT = 500;

export interface SqlOutboxWriterOptions {
  /** PostgreSQL channel notified by the writing transaction at commit, or undefined for none. */
  notifyChannel?: string;
  /**
   * The WAL delivery mode's message prefix: on PostgreSQL, messages go to the WAL as one logical
   * decoding message (delayed ones excepted), as the TypeORM writer does in that mode, so both
   * writers' messages of one aggregate reach the stream in commit order.
   */
  walPrefix?: string;
}

/**
 * Writes outbox rows through a transaction that a data layer other than TypeORM opened (Prisma,
 * Drizzle, Kysely, MikroORM, node-postgres): the same rows, envelope, guards and per-aggregate
 * order as the TypeORM writer, over the `SqlTransaction` port.
 */
export class SqlOutboxWriter {
  // Statements of one transaction share one connection: writes through it are chained so that
  // rows get their positions in call order even when the caller does not await each add.
  private readonly pendingWrites = new WeakMap<object, Promise<unknown>>();
  private readonly dialects = new Map<SqlDialectName, OutboxTableDialect>();
  private readonly table: OutboxTable;

  constructor(
    private readonly factory: OutboxMessageFactory,
    table: string | OutboxTableLocation,
    private readonly options: SqlOutboxWriterOptions = {},
  ) {
    this.table = OutboxTable.of(table);
  }

  /** Adds messages inside `transaction`; they commit or roll back with it. Resolves with their ids. */
  async add(transaction: SqlTransaction, input: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    const dialect = this.dialectFor(transaction);
    const drafts = (Array.isArray(input) ? input : [input]).map(toDraft);
    if (drafts.length === 0) return [];
    // Every row is built (and checked) before any SQL runs: a bad message writes nothing.
    const messages = drafts.flatMap((draft) => this.factory.create(draft));
    const keys = drafts.map((draft) => aggregateKey(draft.aggregateType, draft.aggregateId));
    const owner = transaction.owner ?? transaction;
    const previous = this.pendingWrites.get(owner) ?? Promise.resolve();
    const written = previous.catch(() => undefined).then(() => this.write(transaction, dialect, messages, keys));
    this.pendingWrites.set(owner, written);
    await written;
    return messages.map((message) => message.id);
  }

  private async write(transaction: SqlTransaction, dialect: OutboxTableDialect, messages: NewOutboxMessage[], keys: string[]): Promise<void> {
    const prefix = transaction.dialect === 'postgres' ? this.options.walPrefix : undefined;
    if (prefix === undefined) return this.insert(transaction, dialect, messages, keys);
    // Decoded at commit, in commit order: the stream needs no lock to keep an aggregate's order.
    const delayed = messages.filter((message) => message.delayMs !== undefined);
    const streamed = messages.filter((message) => message.delayMs === undefined);
    if (delayed.length > 0) await this.insert(transaction, dialect, delayed, keys);
    if (streamed.length > 0) await transaction.execute(WAL_EMIT_STATEMENT, [prefix, encodeWalRecord(streamed)]);
  }

  private async insert(transaction: SqlTransaction, dialect: OutboxTableDialect, messages: NewOutboxMessage[], keys: string[]): Promise<void> {
    // PostgreSQL: the first INSERT takes the aggregates' advisory locks; MariaDB: row locks on the
    // lock table's buckets. Both transaction-scoped, the same keys as the TypeORM writer, so the two
    // writers also wait for each other. SQLite has one writer at a time and needs none.
    if (!dialect.locksInInsert) await lockAggregates(dialect, keys, (sql, params) => transaction.query(sql, params));
    for (let start = 0; start < messages.length; start += ROWS_PER_INSERT) {
      // PostgreSQL folds identical notifications of one transaction into one, so each insert may carry it.
      const lockKeys = dialect.locksInInsert && start === 0 ? keys : undefined;
      const { sql, params } = dialect.insert(messages.slice(start, start + ROWS_PER_INSERT), { lockKeys });
      await transaction.execute(sql, params);
    }
  }

  private dialectFor(transaction: SqlTransaction): OutboxTableDialect {
    let dialect = this.dialects.get(transaction.dialect);
    if (!dialect) {
      dialect = this.createDialect(transaction);
      this.dialects.set(transaction.dialect, dialect);
    }
    return dialect;
  }

  private createDialect({ dialect }: SqlTransaction): OutboxTableDialect {
    switch (dialect) {
      case 'postgres':
        return new PostgresOutboxDialect(OutboxTable.on('postgres', this.table), { notifyChannel: this.options.notifyChannel });
      case 'sqlite':
        return new SqliteOutboxDialect(OutboxTable.on('better-sqlite3', this.table));
      case 'mariadb':
        return new MariaDbOutboxDialect(OutboxTable.on('mariadb', this.table));
    }
  }
}
