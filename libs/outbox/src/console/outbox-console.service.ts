import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { BulkOutcome, MessagePage, OutboxConsole, PauseRequest } from '../core/console/outbox-console';
import type { MessageDetail, MessageFilter, PausedDestination, ThroughputPoint } from '../core/console/outbox-console.port';
import type { OutboxStatsSnapshot } from '../core/stats/outbox-stats';
import type { ReplayOutcome, ReplayRequest } from '../core/replay/outbox-replay';
import { OUTBOX_CONSOLE_OPTIONS } from './outbox-console.constants';
import { CONSOLE_TARGET, type ConsoleTargetRef } from './console-target';
import { errorText } from '../core/error-text';
import { consoleMounted, consoleWithoutAuth, pausedLog, PAYLOAD_WITHHELD, redactionFailed, replayedLog } from './outbox-console.messages';
import type { ResolvedConsoleOptions } from './outbox-console.options';

export interface ConsoleSummary {
  stats: OutboxStatsSnapshot;
  /** Published per minute over the last hour. */
  throughput: ThroughputPoint[];
  paused: PausedDestination[];
  readOnly: boolean;
  /** The largest page the message list serves (the `maxPageSize` option). */
  maxPageSize: number;
}

/**
 * The console's Nest face: the core console on the target's table (this module's outbox, or the
 * tenant a request names), its stats, redaction and relay wake-ups.
 */
@Injectable()
export class OutboxConsoleService implements OnApplicationBootstrap {
  private readonly logger = new Logger('OutboxConsole');

  constructor(
    @Inject(CONSOLE_TARGET) private readonly target: ConsoleTargetRef,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  private get console(): OutboxConsole {
    return this.target().console;
  }

  /** What the page's heading names: a tenant's id on a mount over tenant outboxes, else none. */
  heading(): string | undefined {
    return this.target().heading;
  }

  onApplicationBootstrap(): void {
    // At every start, not once: a console left open must stay visible in the logs.
    if (this.options.noAuth) this.logger.warn(consoleWithoutAuth(this.options.path));
    else this.logger.log(consoleMounted(this.options.path, this.options.readOnly));
  }

  /** `fresh`: read the stats now (after an action, or asked by the operator) instead of the shared cached snapshot. */
  async summary(fresh = false): Promise<ConsoleSummary> {
    const [stats, throughput, paused] = await Promise.all([this.target().stats({ fresh }), this.console.throughput(60), this.console.paused()]);
    return { stats, throughput, paused, readOnly: this.options.readOnly, maxPageSize: this.options.maxPageSize };
  }

  list(filter: MessageFilter, before: string | null, limit: number): Promise<MessagePage> {
    return this.console.list(filter, before, limit);
  }

  async get(id: string): Promise<MessageDetail> {
    const message = await this.console.get(id);
    try {
      return { ...message, payload: this.options.redactPayload(message.payload, message) };
    } catch (error) {
      // Never the unredacted payload, and no 500 for the rest of the message: the payload is withheld and the hook's failure logged.
      this.logger.error(redactionFailed(id, errorText(error)));
      return { ...message, payload: PAYLOAD_WITHHELD };
    }
  }

  async requeue(id: string): Promise<void> {
    await this.console.requeue(id);
    this.wakeRelay();
  }

  async discard(id: string): Promise<void> {
    await this.console.discard(id);
    this.wakeRelay();
  }

  bulkRequeue(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    return this.waking(this.console.bulkRequeue(filter, dryRun));
  }

  bulkDiscard(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    return this.waking(this.console.bulkDiscard(filter, dryRun));
  }

  async retryNow(id: string): Promise<void> {
    await this.console.retryNow(id);
    this.wakeRelay();
  }

  bulkRetryNow(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    return this.waking(this.console.bulkRetryNow(filter, dryRun));
  }

  /** Published messages again, in their original order (see OutboxReplay); logged with its reason, as a pause is. */
  async replay(request: Omit<ReplayRequest, 'by'>): Promise<ReplayOutcome> {
    const outcome = await this.target().replayer.replay({ ...request, by: 'console' });
    if (outcome.replayed > 0) {
      this.logger.warn(replayedLog(outcome.replayed, outcome.replayId!, request.reason));
      this.wakeRelay();
    }
    return outcome;
  }

  paused(): Promise<PausedDestination[]> {
    return this.console.paused();
  }

  async pause(destination: string, request: PauseRequest): Promise<boolean> {
    const paused = await this.console.pause(destination, request);
    // In the logs too: a pause holds every relay back, and whoever reads the logs later should know why.
    if (paused) this.logger.warn(pausedLog(destination, request.reason));
    return paused;
  }

  async resume(destination: string): Promise<boolean> {
    const resumed = await this.console.resume(destination);
    if (resumed) this.wakeRelay();
    return resumed;
  }

  private async waking(bulk: Promise<BulkOutcome>): Promise<BulkOutcome> {
    const outcome = await bulk;
    if (outcome.changed > 0) this.wakeRelay();
    return outcome;
  }

  // Released rows (a discard frees later rows of its aggregate, a retry is due now) go out now rather than at the next poll.
  private wakeRelay(): void {
    this.target().wakeRelay().catch((error: unknown) => this.logger.warn(`Relay wake-up after a console action failed: ${String(error)}`));
  }
}
