/** What the outbox table is, as the partition maintenance finds it. */
export type OutboxTableKind = 'partitioned' | 'plain' | 'missing';

export interface PartitionsMade {
  made: string[];
  /** Partitions that could not be made (a lock not had in time, rows of their range already in DEFAULT); the next run tries again. */
  failed: Array<{ partition: string; error: string }>;
}

export interface PartitionsDropped {
  dropped: string[];
  /** Past retention but holding a pending, dead or discarded row, or one published too recently: kept whole. */
  kept: string[];
  failed: Array<{ partition: string; error: string }>;
}

/** The time partitions of a partitioned outbox table (PostgreSQL), next to the row cleanup of `OutboxMaintenanceStore`. */
export interface OutboxPartitionStore {
  tableKind(): Promise<OutboxTableKind>;
  /** Makes the partition holding `at` (default: now) and the configured number after it, where none covers their range. */
  makeAhead(at?: Date): Promise<PartitionsMade>;
  /**
   * Detaches and drops each time partition that ended more than `publishedRetentionMs` ago and whose
   * rows are all published more than that long ago; a partition with any other row is kept.
   */
  dropExpired(publishedRetentionMs: number): Promise<PartitionsDropped>;
}
