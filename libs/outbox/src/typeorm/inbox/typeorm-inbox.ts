import type { DataSource, EntityManager } from 'typeorm';
import type { PoisonPolicy } from '../../core/poison/poison-policy';
import { TransactionalInbox } from '../../core/inbox/transactional-inbox';
import { TypeOrmInboxStore } from './typeorm-inbox.store';
import { pruneInBatches } from '../../core/inbox/prune-batches';

export type { InboxDecoding } from '../../core/inbox/transactional-inbox';

/** The inbox in TypeORM transactions: `TransactionalInbox` over a data source's EntityManager. */
export class TypeOrmInbox extends TransactionalInbox<EntityManager> {
  constructor(
    dataSource: DataSource,
    readonly store: TypeOrmInboxStore,
    /** Opens the transaction; default `dataSource.transaction`. A runner given here does its own serializing. */
    runTransaction?: <T>(work: (manager: EntityManager) => Promise<T>) => Promise<T>,
    /** Without one, a delivery without a usable id throws and a failing one is retried for ever, as before the policy existed. */
    poison?: PoisonPolicy<EntityManager>,
  ) {
    super(store, runTransaction ?? typeOrmTransactions(dataSource), poison);
  }

  /** The EntityManager of the inbox transaction running the current handler. */
  manager(): EntityManager {
    return this.transaction();
  }

  /** Deletes marks older than `retentionMs`, `batchSize` per statement; resolves with how many went. */
  prune(retentionMs: number, batchSize: number, maxBatches = 100): Promise<number> {
    return pruneInBatches((ms, limit) => this.store.prune(ms, limit), retentionMs, batchSize, maxBatches);
  }
}

function typeOrmTransactions(dataSource: DataSource): <T>(work: (manager: EntityManager) => Promise<T>) => Promise<T> {
  if (dataSource.options.type !== 'better-sqlite3') return (work) => dataSource.transaction(work);
  // SQLite through TypeORM shares one connection: overlapping transactions would nest as
  // savepoints of one another, so the inbox runs its transactions one after another there.
  let queue: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = queue.catch(() => undefined).then(() => dataSource.transaction(work));
    queue = next;
    return next;
  };
}
