import type { EntityManager } from 'typeorm';
import { OutboxWriteError } from '../core/outbox.errors';
import { addOutsideTransaction } from '../core/outbox.messages';
import type { MessageDraft, OutboxMessageFactory } from '../core/outbox-message.factory';
import { toDraft, type OutboxMessageInput } from '../core/outbox-message-input';
import type { OutboxTableDialect } from '../sql/dialects/outbox-sql.dialect';
import type { OutboxTableLocation } from '../sql/dialects/outbox-table';
import { aggregateKey } from '../sql/aggregate-key';
import { lockAggregates } from '../sql/aggregate-locks';
import { tableDialectFor } from './outbox-sql.factory';
import { canRunPrepared, runPrepared } from './prepared-statements';
import type { OutboxTransactionTracker } from './outbox-transaction.tracker';
import type { WalMessageEmitter } from './wal/wal-message.emitter';

// Moved to core, where the data-layer writer takes them too; re-exported for the imports that name this file.
export { toDraft, type OutboxMessageInput } from '../core/outbox-message-input';

// Keeps each INSERT well below the bind-parameter limits of every supported database.
const ROWS_PER_INSERT = 500;

/** Writes outbox rows through the caller's EntityManager, i.e. inside the caller's transaction. */
export class TypeOrmOutboxWriter {
  // TypeORM notifies subscribers of one save concurrently; statements on one connection are
  // chained here so they run one after another, in the order the events were captured.
  private readonly pendingWrites = new WeakMap<object, Promise<unknown>>();
  private readonly dialects = new Map<string, OutboxTableDialect>();

  constructor(
    private readonly factory: OutboxMessageFactory,
    private readonly tracker: OutboxTransactionTracker,
    private readonly table: string | OutboxTableLocation,
    /** PostgreSQL channel notified once per writing transaction, or undefined for none. */
    private readonly notifyChannel?: string,
    /** PostgreSQL: the INSERT as a named prepared statement inside transactions (see the `preparedStatements` option). */
    private readonly preparedStatements = true,
    /** WAL delivery mode: messages go to the WAL as logical messages instead of rows (delayed ones excepted). */
    private readonly wal?: WalMessageEmitter,
  ) {}

  /** Explicit API: adds messages inside a transaction the caller already has. */
  async add(manager: EntityManager, input: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    const queryRunner = manager.queryRunner;
    if (!queryRunner?.isTransactionActive) throw new OutboxWriteError(addOutsideTransaction());
    const drafts = (Array.isArray(input) ? input : [input]).map(toDraft);
    const ids = await this.write(manager, drafts);
    this.tracker.wrote(queryRunner);
    return ids;
  }

  // Built once per database type, not on every save: a dialect prepares all its SQL text up front.
  private dialectFor(manager: EntityManager): OutboxTableDialect {
    const type = manager.connection.options.type;
    let dialect = this.dialects.get(type);
    if (!dialect) {
      dialect = tableDialectFor(type, this.table, { notifyChannel: this.notifyChannel });
      this.dialects.set(type, dialect);
    }
    return dialect;
  }

  /** Builds the rows (failing before any SQL if one cannot be built) and inserts them. */
  async write(manager: EntityManager, drafts: MessageDraft[]): Promise<string[]> {
    if (drafts.length === 0) return [];
    const messages = drafts.flatMap((draft) => this.factory.create(draft));
    const wal = this.wal;
    // A stream cannot hold a message back: delayed ones go to the table, whose relay waits for them.
    const rows = wal ? messages.filter((message) => message.delayMs !== undefined) : messages;
    const dialect = this.dialectFor(manager);
    const queryRunner = manager.queryRunner;
    const writeAll = async () => {
      if (!wal || rows.length > 0) await insertAll();
      if (wal) await wal.emit(manager, messages.filter((message) => message.delayMs === undefined));
    };
    const insertAll = async () => {
      // Both write paths lock the aggregate: a save's row lock alone does not make an explicit
      // `add` of the same aggregate wait, nor the reverse, and positions must follow commit order.
      // Where the dialect can, the first insert takes the locks itself (one round trip less).
      const keys = drafts.map((draft) => aggregateKey(draft.aggregateType, draft.aggregateId));
      if (!dialect.locksInInsert) await lockAggregates(dialect, keys, (sql, params) => manager.query(sql, params));
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        // One notification per transaction wakes the relays as well as one per insert, and each costs the insert a CTE.
        const inTransaction = queryRunner?.isTransactionActive === true;
        const notify = !inTransaction || this.tracker.needsNotification(queryRunner);
        const lockKeys = dialect.locksInInsert && start === 0 ? keys : undefined;
        const { sql, params } = dialect.insert(rows.slice(start, start + ROWS_PER_INSERT), { notify, lockKeys });
        if (this.preparedStatements && canRunPrepared(manager)) await runPrepared(manager, sql, params);
        else await manager.query(sql, params);
        if (notify && inTransaction) this.tracker.notified(queryRunner);
      }
    };
    const connection = manager.queryRunner ?? manager;
    const previous = this.pendingWrites.get(connection) ?? Promise.resolve();
    const written = previous.catch(() => undefined).then(writeAll);
    this.pendingWrites.set(connection, written);
    await written;
    return messages.map((message) => message.id);
  }
}
