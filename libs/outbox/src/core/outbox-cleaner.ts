import type { OutboxMaintenanceStore } from './outbox-maintenance.port';
import type { RelayLogger } from './outbox-relay';
import { errorText } from './error-text';

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
  published: number;
  dead: number;
}

/** Deletes settled rows in small batches; what one run leaves, the next run takes. */
export class OutboxCleaner {
  private running: Promise<CleanupOutcome> | undefined;

  constructor(
    private readonly store: OutboxMaintenanceStore,
    private readonly settings: CleanupSettings,
    private readonly logger: RelayLogger,
  ) {}

  /** One run; a call while a run is going returns that run. */
  run(): Promise<CleanupOutcome> {
    this.running ??= this.clean().finally(() => (this.running = undefined));
    return this.running;
  }

  private async clean(): Promise<CleanupOutcome> {
    const { publishedRetentionMs, deadRetentionMs, batchSize, maxBatchesPerRun } = this.settings;
    try {
      const published = await this.inBatches((limit) => this.store.deletePublished(publishedRetentionMs, limit), batchSize, maxBatchesPerRun);
      const dead =
        deadRetentionMs === null ? 0 : await this.inBatches((limit) => this.store.deleteDead(deadRetentionMs, limit), batchSize, maxBatchesPerRun);
      return { published, dead };
    } catch (error) {
      this.logger.warn(`Outbox cleanup failed; the next run retries: ${errorText(error)}`);
      return { published: 0, dead: 0 };
    }
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
