import type { EntityManager } from 'typeorm';
import { errorText } from '../../core/error-text';
import { OutboxAdminError } from '../../core/outbox.errors';
import { noPoisonRecord, noReplayHandler, notReplayable, replayFailed } from '../../core/poison/poison.messages';
import type { PoisonCount, PoisonListFilter, PoisonRecord, PoisonStore } from '../../core/poison/poison.port';
import type { TransactionalInbox } from '../../core/inbox/transactional-inbox';

/** Runs a recorded message the way the consumer's handler would: it receives the stored message, and the replay's transaction (an EntityManager on TypeORM). */
export type ReplayHandler<T = EntityManager> = (message: unknown, transaction: T) => Promise<unknown> | unknown;

const REPLAYS_PER_LOOK = 100;

/**
 * The recorded poison messages of this app's inbox, and the handlers that can replay them: every
 * `@Idempotent()` handler and every `@OnOutboxEvent({ inbox: true })` handler registers itself
 * under its consumer name; `OutboxInbox.poison.register()` adds one for `process()` callers.
 */
export class PoisonReplays {
  // Handlers take the inbox's transaction type (EntityManager, or InboxSqlTransaction with `connection`).
  private readonly handlers = new Map<string, ReplayHandler<any>>();
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly inbox: TransactionalInbox<any>,
    private readonly store: PoisonStore<any>,
  ) {}

  register<T = EntityManager>(consumer: string, handler: ReplayHandler<T>): void {
    this.handlers.set(consumer, handler);
  }

  consumers(): string[] {
    return [...this.handlers.keys()].sort();
  }

  list(filter: PoisonListFilter): Promise<PoisonRecord[]> {
    return this.store.list(filter);
  }

  async get(consumer: string, key: string): Promise<PoisonRecord> {
    const record = await this.store.get(consumer, key);
    if (!record) throw new OutboxAdminError(noPoisonRecord(consumer, key), 'not-found');
    return record;
  }

  counts(): Promise<PoisonCount[]> {
    return this.store.counts();
  }

  /** Deletes a record for good (the message is dropped); fails with `not-found` when there is none. */
  async remove(consumer: string, key: string): Promise<void> {
    if (!(await this.store.remove(consumer, key))) throw new OutboxAdminError(noPoisonRecord(consumer, key), 'not-found');
  }

  /** Replays one record now, in this process; the record is deleted when its handler succeeds. */
  async replay(consumer: string, key: string): Promise<void> {
    const record = await this.get(consumer, key);
    if (record.messageId === null) throw new OutboxAdminError(notReplayable(consumer, key, `it could not be decoded (${record.reason})`), 'conflict');
    if (record.truncated) throw new OutboxAdminError(notReplayable(consumer, key, 'it was longer than poison.maxStoredChars and only its start was kept'), 'conflict');
    const handler = this.handlers.get(consumer);
    if (!handler) throw new OutboxAdminError(noReplayHandler(consumer, this.consumers()), 'conflict');
    let outcome;
    try {
      outcome = await this.inbox.replay(record, handler);
    } catch (error) {
      throw new OutboxAdminError(replayFailed(consumer, key, errorText(error)), 'conflict');
    }
    // Another replay (another operator, another instance) took it first and ran it.
    if (!outcome.replayed) throw new OutboxAdminError(noPoisonRecord(consumer, key), 'not-found');
  }

  /**
   * Replays the records the CLI asked for whose handler runs in this process, after sweeping away
   * the records of messages handled since they failed; one look at a time.
   */
  runRequested(logger: { warn(message: string): void }): Promise<unknown> {
    this.running ??= (async () => {
      await this.store.sweep();
      const requested = await this.store.list({ state: 'replay-requested', limit: REPLAYS_PER_LOOK });
      for (const record of requested.filter((candidate) => this.handlers.has(candidate.consumer))) {
        await this.replay(record.consumer, record.key).catch((error: unknown) => logger.warn(errorText(error)));
      }
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}
