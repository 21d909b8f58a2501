import type { MessageDraft, OutboxMessageFactory } from '../core/outbox-message.factory';
import { toDraft, type OutboxMessageInput } from '../core/outbox-message-input';
import type { NewOutboxMessage } from '../core/outbox-message';
import type { ClaimedPayload } from '../core/claim-check/claim-check-reference';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { noPayloadStore } from '../core/claim-check/claim-check.messages';
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
import { executeAtCommitOrNow, type SqlDialectName, type SqlTransaction } from '../core/sql-transaction.port';
import type { WalWrite } from '../core/stream/wal-options';
import type { PayloadStore } from '../core/claim-check/payload-store.port';

// Keeps each INSERT well below the bind-parameter limits of every supported database.
const ROWS_PER_INSERT = 500;

export interface SqlOutboxWriterOptions {
  /** PostgreSQL channel notified by the writing transaction at commit, or undefined for none. */
  notifyChannel?: string;
  /**
   * The WAL delivery mode, on PostgreSQL (delayed messages are rows the table relay owns in either
   * write): `write: 'row'` makes the others rows the stream owns, which it decodes from their inserts;
   * `'message'` puts them in the WAL as one logical decoding message under `prefix`. Either is decoded
   * at commit, in commit order. `messagesDecoded() === false` (no usable slot, as last watched)
   * makes `'message'` write rows too, which a new slot hands to the table relay. Default:
   * undefined, the table mode (every message a row).
   */
  wal?: { prefix: string; write: WalWrite; messagesDecoded?: () => boolean };
  /**
   * Told about each delayed row once its INSERT has run (so that the relay can wake when it comes
   * due): the row's due time counts from the database's clock at the insert, which a message built
   * earlier, in a busy transaction, may be well before.
   */
  onDelayed?: (delayMs: number) => void;
  /**
   * Where the claim check stores payloads that the factory took out of their messages (option
   * `claimCheck`): written before the rows, while the caller's transaction is open.
   */
  payloadStore?: PayloadStore;
}

/**
 * The one writer of outbox messages, in either delivery mode: through the `SqlTransaction` of the
 * caller's data layer (TypeORM's, from the entity subscriber and `OutboxPublisher.add(manager, …)`;
 * Prisma's, Drizzle's, Kysely's, MikroORM's, node-postgres'; or your own), so they commit or roll
 * back with the caller's data.
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
    return this.write(transaction, (Array.isArray(input) ? input : [input]).map(toDraft));
  }

  /** As `add`, for drafts already taken from an aggregate's recorded events (the TypeORM entity subscriber). */
  async write(transaction: SqlTransaction, drafts: MessageDraft[]): Promise<string[]> {
    const dialect = this.dialectFor(transaction);
    if (drafts.length === 0) return [];
    // Every row is built (and checked) before any SQL runs: a bad message writes nothing.
    const messages = drafts.flatMap((draft) => this.factory.create(draft));
    const keys = drafts.map((draft) => aggregateKey(draft.aggregateType, draft.aggregateId));
    const owner = transaction.owner ?? transaction;
    const previous = this.pendingWrites.get(owner) ?? Promise.resolve();
    const written = previous.catch(() => undefined).then(() => this.deliver(transaction, dialect, messages, keys));
    this.pendingWrites.set(owner, written);
    await written;
    return messages.map((message) => message.id);
  }

  private async deliver(transaction: SqlTransaction, dialect: OutboxTableDialect, messages: NewOutboxMessage[], keys: string[]): Promise<void> {
    const claimed = messages.flatMap((message) => (message.claimed ? [message.claimed] : []));
    if (claimed.length > 0) await this.storePayloads(transaction, claimed);
    const wal = transaction.dialect === 'postgres' ? this.options.wal : undefined;
    if (wal === undefined) return this.insert(transaction, dialect, messages, keys);
    const delayed = messages.filter((message) => message.delayMs !== undefined);
    const streamed = messages.filter((message) => message.delayMs === undefined);
    if (delayed.length > 0) await this.insert(transaction, dialect, delayed, keys);
    if (streamed.length === 0) return;
    // Rows keep the aggregates' locks: should a new slot hand them to the table relay, it publishes
    // them in position order, which the locks make commit order.
    if (wal.write === 'row' || wal.messagesDecoded?.() === false) return this.insert(transaction, dialect, streamed, keys, true);
    // Decoded at commit, in commit order: the stream needs no lock to keep an aggregate's order.
    await executeAtCommitOrNow(transaction, WAL_EMIT_STATEMENT, [wal.prefix, encodeWalRecord(streamed)]);
  }

  private async storePayloads(transaction: SqlTransaction, claimed: ClaimedPayload[]): Promise<void> {
    // A factory with a claim check and a writer without a store would publish references to nothing.
    if (!this.options.payloadStore) throw new OutboxConfigurationError(noPayloadStore(claimed[0].reference.key));
    await this.options.payloadStore.put(transaction, claimed);
  }

  private async insert(transaction: SqlTransaction, dialect: OutboxTableDialect, messages: NewOutboxMessage[], keys: string[], streamOwned = false): Promise<void> {
    // PostgreSQL: the first INSERT takes the aggregates' advisory locks; MariaDB: row locks on the
    // lock table's buckets. Both transaction-scoped, so that writes of one aggregate through any data
    // layer wait for each other and positions follow commit order. SQLite has one writer at a time and needs none.
    if (!dialect.locksInInsert) await lockAggregates(dialect, keys, (sql, params) => transaction.query(sql, params));
    const notifications = transaction.notifications;
    const onDelayed = this.options.onDelayed;
    for (let start = 0; start < messages.length; start += ROWS_PER_INSERT) {
      // One notification per transaction wakes the relays as well as one per insert, and each costs the insert a CTE;
      // a layer that cannot tell sends it with every insert, which PostgreSQL folds into one at commit.
      // The stream reads its own rows from the WAL: no relay needs waking for them.
      const notify = !streamOwned && (notifications?.needed() ?? true);
      const lockKeys = dialect.locksInInsert && start === 0 ? keys : undefined;
      const { sql, params } = dialect.insert(messages.slice(start, start + ROWS_PER_INSERT), { notify, lockKeys, streamOwned });
      // A delayed row's wake-up counts from its INSERT having run: it is not held for the COMMIT.
      if (onDelayed && messages.some((message) => message.delayMs !== undefined)) await transaction.execute(sql, params);
      else await executeAtCommitOrNow(transaction, sql, params);
      if (notify) notifications?.sent();
    }
    if (onDelayed) for (const delayMs of new Set(messages.flatMap((message) => (message.delayMs === undefined ? [] : [message.delayMs])))) onDelayed(delayMs);
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
