import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { OutboxCleaner, type CleanupOutcome } from '../core/outbox-cleaner';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import { createSqlOutboxMaintenanceStore, createSqlOutboxPartitionStore } from '../sql/outbox-sql.factory';
import type { OutboxPartitionStore } from '../core/partitioning/outbox-partitions.port';
import { tableNotPartitioned } from '../core/partitioning/partitioning.messages';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { OutboxTable } from '../sql/dialects/outbox-table';
import type { SqlConnection } from '../core/sql-connection.port';
import { OUTBOX_CONNECTION, OUTBOX_EXTRAS, OUTBOX_SETTINGS } from './outbox.constants';
import { settleWithin } from '../core/deadline';
import { SHUTDOWN_STAGE, SHUTDOWN_STEP_TIMEOUT_MS, type ReportsShutdownStage } from './shutdown/shutdown-stage';
import { shutdownStepTimedOut } from './shutdown/shutdown.messages';
import type { ResolvedOutboxExtras } from './outbox.module-definition';
import { whileServerRestarts } from '../sql/server-restart';
import { claimCheckStore } from './claim-check/claim-check.store';

/** Deletes settled rows on a schedule, on instances that relay. */
@Injectable()
export class OutboxCleanupHost implements OnApplicationBootstrap, BeforeApplicationShutdown, ReportsShutdownStage {
  private readonly logger = new Logger('Outbox');
  private cleaner: OutboxCleaner | undefined;

  constructor(
    @Inject(OUTBOX_SETTINGS) private readonly settings: ResolvedOutboxSettings,
    @Inject(OUTBOX_EXTRAS) private readonly extras: ResolvedOutboxExtras,
    @Inject(OUTBOX_CONNECTION) private readonly connection: SqlConnection,
  ) {}

  // Timers of its own rather than the app's SchedulerRegistry: a second ScheduleModule.forRoot()
  // would run the app's own @Interval/@Cron jobs twice.
  private timer: NodeJS.Timeout | undefined;

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.relay) return;
    const { cleanup, partitioning, claimCheck } = this.settings;
    const payloads = claimCheckStore(claimCheck, this.extras)?.collector(this.connection);
    const partitions = partitioning && createSqlOutboxPartitionStore(this.connection, this.extras, partitioning);
    const restarts = { logger: this.logger };
    if (partitions) await whileServerRestarts('reading the partitioned table', () => this.checkPartitioned(partitions), restarts);
    this.cleaner = new OutboxCleaner(
      createSqlOutboxMaintenanceStore(this.connection, this.extras, partitioning),
      {
        // With deleteOnPublish nothing published stays; the statement then finds nothing, cheaply.
        publishedRetentionMs: cleanup.publishedRetentionMs,
        deadRetentionMs: cleanup.deadRetentionMs,
        batchSize: cleanup.batchSize,
        maxBatchesPerRun: 100,
      },
      this.logger,
      partitions,
      payloads,
    );
    // Partitions ahead at once: the first run would come only after intervalMs.
    const cleaner = this.cleaner;
    if (partitions) await whileServerRestarts('making the partitions ahead', () => cleaner.maintainPartitions(partitions, cleanup.publishedRetentionMs), restarts);
    this.timer = setInterval(() => void this.cleaner?.run(), cleanup.intervalMs);
  }

  /** A plain or missing table refuses to start: partitions cannot be made on it, and cleanup would not be what was asked. */
  private async checkPartitioned(partitions: OutboxPartitionStore): Promise<void> {
    const kind = await partitions.tableKind();
    if (kind !== 'partitioned') throw new OutboxConfigurationError(tableNotPartitioned(OutboxTable.of(this.extras).toString(), kind));
  }

  /** One cleanup run now; for tests and tools. */
  runNow(): Promise<CleanupOutcome> {
    return this.cleaner?.run() ?? Promise.resolve({ published: 0, dead: 0 });
  }

  private stage: string | undefined;

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const cleaner = this.cleaner;
    this.cleaner = undefined;
    if (!cleaner) return;
    // A last run (it also waits for one the timer started); a database that does not answer must not hold the stop.
    this.stage = 'a last cleanup run';
    if ((await settleWithin(cleaner.run(), SHUTDOWN_STEP_TIMEOUT_MS)) === 'timeout') {
      this.logger.warn(shutdownStepTimedOut('the outbox cleanup', SHUTDOWN_STEP_TIMEOUT_MS));
    }
    this.stage = undefined;
  }

  [SHUTDOWN_STAGE](): string | undefined {
    return this.stage;
  }
}
