import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import { OutboxConfigurationError, OutboxWriteError } from '../../core/outbox.errors';
import type { InboxOutcome } from '../../core/inbox/inbox.port';
import { checkConsumerName } from '../../core/inbox/inbox-settings';
import { invalidMessageId, outsideInboxTransaction } from '../../core/inbox/inbox.messages';
import { checkMessageId, decodeEnvelope, type Decoded } from '../../core/poison/poison-decoding';
import type { PoisonPolicy } from '../../core/poison/poison-policy';
import type { PoisonRecord } from '../../core/poison/poison.port';
import { TypeOrmInboxStore } from './typeorm-inbox.store';
import { pruneInBatches } from '../../core/inbox/prune-batches';

/** How `process` reads a delivery: `id` (an envelope, `{ id }` or a bare id) or `envelope` (every field of an outbox envelope checked). */
export type InboxDecoding = 'id' | 'envelope';

/**
 * Runs a consumer's work at most once per message: the (consumer, message id) mark is inserted
 * first, in the transaction that then runs the work, so both commit or neither does. A
 * redelivery finds the mark and is skipped; a concurrent delivery of the same message waits on
 * the mark's key until the first transaction ends, then skips (or runs, if the first rolled back).
 * With a poison policy, a delivery that cannot be decoded, or whose work fails past the policy's
 * limit, is recorded and resolves `{ setAside }`: the caller acknowledges it.
 */
export class TypeOrmInbox {
  private readonly current = new AsyncLocalStorage<EntityManager>();
  // SQLite through TypeORM shares one connection: overlapping transactions would nest as
  // savepoints of one another, so the inbox runs its transactions one after another there.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    readonly store: TypeOrmInboxStore,
    /** Opens the transaction; default `dataSource.transaction`. A runner given here does its own serializing. */
    private readonly runTransaction?: <T>(work: (manager: EntityManager) => Promise<T>) => Promise<T>,
    /** Without one, a delivery without a usable id throws and a failing one is retried for ever, as before the policy existed. */
    readonly poison?: PoisonPolicy<EntityManager>,
  ) {}

  async process<R>(message: unknown, consumer: string, work: (manager: EntityManager) => Promise<R> | R, decoding: InboxDecoding = 'id'): Promise<InboxOutcome<R>> {
    checkConsumerName(consumer);
    // Without the policy only the id is checked, as before it existed: a stricter check could only turn deliveries into errors.
    const decoded = decode(message, this.poison ? decoding : 'id');
    if (!decoded.ok) {
      if (!this.poison) throw new OutboxConfigurationError(invalidMessageId(consumer, typeof message === 'object' ? (message as { id?: unknown } | null)?.id : message));
      return { duplicate: false, setAside: await this.poison.undecodable(consumer, message, decoded.reason) };
    }
    const { messageId } = decoded;
    const unit = async (manager: EntityManager): Promise<InboxOutcome<R>> => {
      if (!(await this.store.mark(manager, consumer, messageId))) return { duplicate: true };
      const result = await this.current.run(manager, () => work(manager));
      // A `failing` record of this message (it failed before) is left to PoisonStore.sweep: now marked, it is no longer shown.
      return { duplicate: false, result };
    };
    try {
      return await this.transaction(unit);
    } catch (error) {
      const record = await this.poison?.failed(consumer, messageId, message, error);
      if (!record) throw error;
      return { duplicate: false, setAside: record };
    }
  }

  /**
   * Runs a recorded message through `work` again, as a first delivery: the record is deleted and the
   * mark the set-aside wrote replaced, in the work's transaction. Resolves `{ replayed: false }` when
   * a concurrent replay took the record first (it waited on the record's row, then found it gone).
   * On failure nothing is changed but the record's attempts and reason.
   */
  async replay<R>(record: PoisonRecord, work: (message: unknown, manager: EntityManager) => Promise<R> | R): Promise<{ replayed: true; result: R } | { replayed: false }> {
    const poison = this.poison!;
    const messageId = record.messageId!;
    const message: unknown = JSON.parse(record.raw);
    try {
      return await this.transaction(async (manager) => {
        if (!(await poison.store.claim(manager, record.consumer, record.key))) return { replayed: false as const };
        await poison.store.unmark(manager, record.consumer, messageId);
        await this.store.mark(manager, record.consumer, messageId);
        const result = await this.current.run(manager, () => work(message, manager));
        return { replayed: true as const, result };
      });
    } catch (error) {
      await poison.failed(record.consumer, messageId, message, error, 1).catch(() => undefined);
      throw error;
    }
  }

  /** The EntityManager of the inbox transaction running the current handler. */
  manager(): EntityManager {
    const manager = this.current.getStore();
    if (!manager) throw new OutboxWriteError(outsideInboxTransaction());
    return manager;
  }

  /** Deletes marks older than `retentionMs`, `batchSize` per statement; resolves with how many went. */
  prune(retentionMs: number, batchSize: number, maxBatches = 100): Promise<number> {
    return pruneInBatches((ms, limit) => this.store.prune(ms, limit), retentionMs, batchSize, maxBatches);
  }

  private transaction<T>(unit: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.runTransaction) return this.runTransaction(unit);
    const run = () => this.dataSource.transaction(unit);
    if (this.dataSource.options.type !== 'better-sqlite3') return run();
    const next = this.queue.catch(() => undefined).then(run);
    this.queue = next;
    return next;
  }
}

function decode(message: unknown, decoding: InboxDecoding): Decoded {
  if (decoding === 'envelope') return decodeEnvelope(message);
  if (typeof message === 'string') return checkMessageId(message);
  return typeof message === 'object' && message !== null ? checkMessageId((message as { id?: unknown }).id) : checkMessageId(message);
}
