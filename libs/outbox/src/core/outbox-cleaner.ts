import type { OutboxMaintenanceStore } from './outbox-maintenance.port';
import type { PayloadCollector } from './claim-check/payload-store.port';
import type { RelayLogger } from './outbox-relay';
import { errorText } from './error-text';
import type { OutboxPartitionStore } from './partitioning/outbox-partitions.port';
import { partitionNotDropped, partitionNotMade } from './partitioning/partitioning.messages';

export interface CleanupSettings {
  /** Published rows older than this are deleted. Ignored with `deleteOnPublish`. */
  publishedRetentionMs: number;
  /** Dead and discarded rows older than this are deleted; `null` keeps them. */
  deadRetentionMs: number | null;
  /** Rows deleted per statement: small, so that no delete holds locks for long. */
  batchSize: number;
  /** Upper bound of statements per run, so that one run ends even under a huge backlog. */
  maxBatchesPerRun: number;
}

export interface CleanupOutcome {
  /** Published rows deleted one by one (not counting those of dropped partitions). */
  published: number;
  dead: number;
  /** Claim-checked payloads deleted (option `claimCheck`); absent without a claim check. */
  payloads?: number;
  /** S3 objects whose transaction never committed, deleted after the grace period; absent unless the store has orphans. */
  orphans?: number;
  /** A partitioned table: the partitions made ahead, dropped whole, and kept past retention for an unsettled row. */
  partitions?: { made: string[]; dropped: string[]; kept: string[] };
}

/**
 * Deletes settled rows in small batches; what one run leaves, the next run takes. On a partitioned
 * table it first makes partitions ahead and drops the expired ones whose rows are all published.
 */
export class OutboxCleaner {
  private running: Promise<CleanupOutcome> | undefined;
  private readonly warnedNotMade = new Set<string>();

  constructor(
    private readonly store: OutboxMaintenanceStore,
    private readonly settings: CleanupSettings,
    private readonly logger: RelayLogger,
    private readonly partitions?: OutboxPartitionStore,
    /**
     * The claim check's stored payloads: deleted by the published rows' retention once their rows
     * are settled, not with each row (a consumer may fetch a payload after its row was deleted on
     * publish, and the WAL mode's messages have no row); and S3's orphans.
     */
    private readonly payloads?: PayloadCollector,
  ) {}

  /** One run; a call while a run is going returns that run. */
  run(): Promise<CleanupOutcome> {
    this.running ??= this.clean().finally(() => (this.running = undefined));
    return this.running;
  }

  private async clean(): Promise<CleanupOutcome> {
    const { publishedRetentionMs, deadRetentionMs, batchSize, maxBatchesPerRun } = this.settings;
    try {
      const partitions = this.partitions ? await this.maintainPartitions(this.partitions, publishedRetentionMs) : undefined;
      const published = await this.inBatches((limit) => this.store.deletePublished(publishedRetentionMs, limit), batchSize, maxBatchesPerRun);
      const dead =
        deadRetentionMs === null ? 0 : await this.inBatches((limit) => this.store.deleteDead(deadRetentionMs, limit), batchSize, maxBatchesPerRun);
      const stored = this.payloads;
      const payloads = stored ? await this.inBatches((limit) => stored.deleteExpired(publishedRetentionMs, limit), batchSize, maxBatchesPerRun) : undefined;
      const orphans = await stored?.collectOrphans?.();
      return { published, dead, ...(payloads === undefined ? {} : { payloads }), ...(orphans === undefined ? {} : { orphans }), ...(partitions ? { partitions } : {}) };
    } catch (error) {
      this.logger.warn(`Outbox cleanup failed; the next run retries: ${errorText(error)}`);
      return { published: 0, dead: 0 };
    }
  }

  /** Making partitions ahead comes first: a partition that is not made only sends rows to DEFAULT, but it is the one that must not be missed. */
  async maintainPartitions(partitions: OutboxPartitionStore, publishedRetentionMs: number): Promise<NonNullable<CleanupOutcome['partitions']>> {
    const made = await partitions.makeAhead();
    // Once per partition: one whose range already has rows in DEFAULT fails on every run until its time has passed.
    for (const { partition, error } of made.failed.filter(({ partition }) => !this.warnedNotMade.has(partition))) {
      this.warnedNotMade.add(partition);
      this.logger.warn(partitionNotMade(partition, error));
    }
    const dropped = await partitions.dropExpired(publishedRetentionMs);
    for (const { partition, error } of dropped.failed) this.logger.warn(partitionNotDropped(partition, error));
    return { made: made.made, dropped: dropped.dropped, kept: dropped.kept };
  }

  private async inBatches(deleteBatch: (limit: number) => Promise<number>, batchSize: number, maxBatches: number): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const deleted = await deleteBatch(batchSize);
      total += deleted;
      if (deleted < batchSize) break;
      // Let the relay and request handlers in between the batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return total;
  }
}
