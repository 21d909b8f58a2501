import type { DeadLetterOutcome, OutboxMaintenanceStore } from '../outbox-maintenance.port';
import type { MessageDetail, MessageFilter, MessageSummary, OutboxConsoleStore, PausedDestination, ThroughputPoint } from './outbox-console.port';
import { ConsoleError } from './console.error';
import { bulkNeedsAFilter, bulkOnlyDead, noSuchMessage, notDeadNow } from './console.messages';

/** Rows changed by one bulk statement: small enough that no statement holds locks for long. */
export const BULK_BATCH_SIZE = 200;

export interface MessagePage {
  messages: MessageSummary[];
  /** Pass as `before` for the next page; `null` on the last page. */
  next: string | null;
}

export interface BulkOutcome {
  /** Rows the filter matches (dead rows only). With `dryRun`, nothing was changed. */
  matched: number;
  /** Rows changed; 0 on a dry run. */
  changed: number;
  dryRun: boolean;
}

/**
 * What an operator can see and do, on any store: plain TypeScript shared by the REST console and
 * the CLI. Requeue and discard touch dead rows only, as `OutboxAdmin` does.
 */
export class OutboxConsole {
  constructor(
    private readonly store: OutboxConsoleStore,
    private readonly maintenance: OutboxMaintenanceStore,
    private readonly batchSize = BULK_BATCH_SIZE,
  ) {}

  async list(filter: MessageFilter, before: string | null, limit: number): Promise<MessagePage> {
    const messages = await this.store.list(filter, before, limit);
    return { messages, next: messages.length === limit ? messages[messages.length - 1].position : null };
  }

  async get(id: string): Promise<MessageDetail> {
    const message = await this.store.get(id);
    if (!message) throw new ConsoleError(noSuchMessage(id), 'not-found');
    return message;
  }

  throughput(minutes = 60): Promise<ThroughputPoint[]> {
    return this.store.throughput(minutes);
  }

  async requeue(id: string): Promise<void> {
    this.check(id, await this.maintenance.requeue(id));
  }

  async discard(id: string): Promise<void> {
    this.check(id, await this.maintenance.discard(id));
  }

  /** Requeues every dead row the filter matches, `batchSize` rows per statement; `dryRun` only counts. */
  bulkRequeue(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    return this.bulk(filter, dryRun, (after) => this.store.requeueBatch(this.deadOnly(filter), after, this.batchSize));
  }

  bulkDiscard(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    return this.bulk(filter, dryRun, (after) => this.store.discardBatch(this.deadOnly(filter), after, this.batchSize));
  }

  paused(): Promise<PausedDestination[]> {
    return this.store.paused();
  }

  pause(destination: string): Promise<boolean> {
    return this.store.pause(destination);
  }

  resume(destination: string): Promise<boolean> {
    return this.store.resume(destination);
  }

  private async bulk(filter: MessageFilter, dryRun: boolean, batch: (after: string) => Promise<string[]>): Promise<BulkOutcome> {
    const dead = this.deadOnly(filter);
    const matched = await this.store.count(dead);
    if (dryRun || matched === 0) return { matched, changed: 0, dryRun };
    let changed = 0;
    let after = '0';
    // Walks forward by position, so it ends even while rows keep dying behind it.
    for (;;) {
      const positions = await batch(after);
      changed += positions.length;
      if (positions.length < this.batchSize) break;
      after = positions.reduce((max, position) => (BigInt(position) > BigInt(max) ? position : max));
    }
    return { matched, changed, dryRun };
  }

  private deadOnly(filter: MessageFilter): MessageFilter {
    if (filter.status !== undefined && filter.status !== 'dead') throw new ConsoleError(bulkOnlyDead(filter.status), 'invalid', 'status');
    const { status: _status, ...narrowing } = filter;
    if (Object.values(narrowing).every((value) => value === undefined)) throw new ConsoleError(bulkNeedsAFilter(), 'invalid', 'filter');
    return { ...narrowing, status: 'dead' };
  }

  private check(id: string, outcome: DeadLetterOutcome): void {
    if (outcome === 'done') return;
    if (outcome === 'missing') throw new ConsoleError(noSuchMessage(id), 'not-found');
    throw new ConsoleError(notDeadNow(id, outcome), 'conflict');
  }
}
