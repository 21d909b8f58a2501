import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import { OutboxConfigurationError, OutboxWriteError } from '../../core/outbox.errors';
import type { InboxOutcome } from '../../core/inbox/inbox.port';
import { checkConsumerName, looksLikeEnvelope } from '../../core/inbox/inbox-settings';
import { invalidMessageId, outsideInboxTransaction } from '../../core/inbox/inbox.messages';
import { TypeOrmInboxStore } from './typeorm-inbox.store';

/**
 * Runs a consumer's work at most once per message: the (consumer, message id) mark is inserted
 * first, in the transaction that then runs the work, so both commit or neither does. A
 * redelivery finds the mark and is skipped; a concurrent delivery of the same message waits on
 * the mark's key until the first transaction ends, then skips (or runs, if the first rolled back).
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
  ) {}

  async process<R>(message: { id: string } | string, consumer: string, work: (manager: EntityManager) => Promise<R> | R): Promise<InboxOutcome<R>> {
    checkConsumerName(consumer);
    const messageId = typeof message === 'string' ? message : looksLikeEnvelope(message) || typeof message?.id === 'string' ? message.id : undefined;
    if (typeof messageId !== 'string' || messageId === '' || messageId.length > 255) {
      throw new OutboxConfigurationError(invalidMessageId(consumer, typeof message === 'object' ? message?.id : message));
    }
    const unit = async (manager: EntityManager): Promise<InboxOutcome<R>> => {
      if (!(await this.store.mark(manager, consumer, messageId))) return { duplicate: true };
      const result = await this.current.run(manager, () => work(manager));
      return { duplicate: false, result };
    };
    if (this.runTransaction) return this.runTransaction(unit);
    const run = () => this.dataSource.transaction(unit);
    if (this.dataSource.options.type !== 'better-sqlite3') return run();
    const next = this.queue.catch(() => undefined).then(run);
    this.queue = next;
    return next;
  }

  /** The EntityManager of the inbox transaction running the current handler. */
  manager(): EntityManager {
    const manager = this.current.getStore();
    if (!manager) throw new OutboxWriteError(outsideInboxTransaction());
    return manager;
  }

  /** Deletes marks older than `retentionMs`, `batchSize` per statement; resolves with how many went. */
  async prune(retentionMs: number, batchSize: number, maxBatches = 100): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const deleted = await this.store.prune(retentionMs, batchSize);
      total += deleted;
      if (deleted < batchSize) break;
    }
    return total;
  }
}
