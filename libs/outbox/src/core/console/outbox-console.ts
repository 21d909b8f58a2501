import type { DeadLetterOutcome, OutboxMaintenanceStore } from '../outbox-maintenance.port';
import type { MessageDetail, MessageFilter, MessageSummary, OutboxConsoleStore, PausedDestination, ThroughputPoint } from './outbox-console.port';
import { ConsoleError } from './console.error';
import { bulkNeedsAFilter, bulkOnlyDead, invalidDestinationArgument, noSuchMessage, notDeadNow, notInBackoff, retryNowOnlyPending, unknownDestination } from './console.messages';
import { MAX_DESTINATION_LENGTH } from './console-input';
import { nameProblem, nameRule } from '../names';

/** Rows changed by one bulk statement: small enough that no statement holds locks for long. */
export const BULK_BATCH_SIZE = 200;

export interface MessagePage {
  messages: MessageSummary[];
  /** Pass as `before` for the next page; `null` on the last page. */
  next: string | null;
}

/** How an operator pauses a destination. */
export interface PauseRequest {
  /** Why; shown with the pause in the console, CLI `status`, health and logs. */
  reason?: string | null;
  /** Pause it although no row has ever used this destination (a new one, or a typo). Default `false`. */
  confirmUnknown?: boolean;
}

export interface BulkOutcome {
  /** Rows the filter matches (dead rows; in backoff for "retry now"). With `dryRun`, nothing was changed. */
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
  async bulkRequeue(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    const dead = this.deadOnly(filter);
    return this.bulk(dead, dryRun, (after) => this.store.requeueBatch(dead, after, this.batchSize));
  }

  async bulkDiscard(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    const dead = this.deadOnly(filter);
    return this.bulk(dead, dryRun, (after) => this.store.discardBatch(dead, after, this.batchSize));
  }

  /**
   * Makes one row in backoff due now. Its attempts, error history and retry limit are unchanged:
   * if this attempt fails too, the retry policy goes on from where it was.
   */
  async retryNow(id: string): Promise<void> {
    const [changed] = await this.store.retryNowBatch({ id, status: 'pending', retrying: true }, '0', 1);
    if (changed !== undefined) return;
    const message = await this.store.get(id);
    if (!message) throw new ConsoleError(noSuchMessage(id), 'not-found');
    throw new ConsoleError(notInBackoff(id, message.status, message.attempts, message.nextAttemptAt), 'conflict');
  }

  /** "Retry now" for every row in backoff that the filter matches, `batchSize` rows per statement; `dryRun` only counts. */
  async bulkRetryNow(filter: MessageFilter, dryRun: boolean): Promise<BulkOutcome> {
    const waiting = this.inBackoffOnly(filter);
    return this.bulk(waiting, dryRun, (after) => this.store.retryNowBatch(waiting, after, this.batchSize));
  }

  paused(): Promise<PausedDestination[]> {
    return this.store.paused();
  }

  /**
   * Holds a destination on every relay. A destination no row has ever used is refused unless
   * `confirmUnknown` is set: a mistyped name would otherwise be paused without a word while the
   * real one keeps publishing.
   */
  async pause(destination: string, request: PauseRequest = {}): Promise<boolean> {
    checkDestinationArgument('pause', destination);
    if (!request.confirmUnknown && !(await this.store.destinationUsed(destination))) {
      throw new ConsoleError(unknownDestination(destination), 'invalid', 'confirmUnknown');
    }
    return this.store.pause(destination, request.reason?.trim() || null);
  }

  async resume(destination: string): Promise<boolean> {
    checkDestinationArgument('resume', destination);
    return this.store.resume(destination);
  }

  private async bulk(filter: MessageFilter, dryRun: boolean, batch: (after: string) => Promise<string[]>): Promise<BulkOutcome> {
    const matched = await this.store.count(filter);
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
    return { ...this.narrowing(filter), status: 'dead' };
  }

  private inBackoffOnly(filter: MessageFilter): MessageFilter {
    if (filter.status !== undefined && filter.status !== 'pending') throw new ConsoleError(retryNowOnlyPending(filter.status), 'invalid', 'status');
    return { ...this.narrowing(filter), status: 'pending', retrying: true };
  }

  // A bulk action never takes every row by accident: at least one field must narrow it.
  private narrowing(filter: MessageFilter): MessageFilter {
    const { status: _status, retrying: _retrying, ...narrowing } = filter;
    if (Object.values(narrowing).every((value) => value === undefined)) throw new ConsoleError(bulkNeedsAFilter(), 'invalid', 'filter');
    return narrowing;
  }

  private check(id: string, outcome: DeadLetterOutcome): void {
    if (outcome === 'done') return;
    if (outcome === 'missing') throw new ConsoleError(noSuchMessage(id), 'not-found');
    throw new ConsoleError(notDeadNow(id, outcome), 'conflict');
  }
}

// Before any statement: a NUL reached PostgreSQL as a raw error, a 256th character the varchar(255) of the paused table.
function checkDestinationArgument(action: 'pause' | 'resume', destination: unknown): void {
  const problem = nameProblem(destination, MAX_DESTINATION_LENGTH);
  if (problem) throw new ConsoleError(invalidDestinationArgument(action, destination, problem, nameRule(MAX_DESTINATION_LENGTH)), 'invalid', 'destination');
}
