import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { InboxOutcome } from '../../core/inbox/inbox.port';
import type { ResolvedInboxSettings } from '../../core/inbox/inbox-settings';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { inboxTableMissing } from '../../core/inbox/inbox.messages';
import { poisonTableMissing } from '../../core/poison/poison.messages';
import { PoisonPolicy } from '../../core/poison/poison-policy';
import { errorText } from '../../core/error-text';
import { TypeOrmInbox } from '../../typeorm/inbox/typeorm-inbox';
import { TypeOrmInboxStore } from '../../typeorm/inbox/typeorm-inbox.store';
import { TypeOrmPoisonStore } from '../../typeorm/poison/typeorm-poison.store';
import { serializeSqliteTransactions } from '../../typeorm/sqlite/serialized-transactions';
import type { OutboxInboxModuleOptions } from './outbox-inbox.options';
import { INBOX_DATA_SOURCE, INBOX_EXTRAS, type ResolvedInboxExtras } from './outbox-inbox.module-definition';
import { PoisonReplays } from './poison-replays';

export const INBOX_SETTINGS = Symbol('outbox:inbox-settings');

/**
 * The idempotent-consumer API: `process(envelope, 'consumer-name', (manager) => work)` runs the
 * work once per message and consumer, in a transaction that also records the message as seen.
 * Applies the poison policy, prunes old marks and runs replays asked for from the CLI on a schedule.
 */
@Injectable()
export class OutboxInbox implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('OutboxInbox');
  private readonly inbox: TypeOrmInbox;
  /** Recorded poison messages: list, replay, delete. `undefined` with `poison: false`. */
  readonly poison: PoisonReplays | undefined;
  private timers: NodeJS.Timeout[] = [];
  private pruning: Promise<number> | undefined;
  /** On SQLite, consumers' transactions take turns on TypeORM's one connection, with or without OutboxModule. */
  private readonly unserialize: () => void;

  constructor(
    @Inject(INBOX_SETTINGS) private readonly settings: ResolvedInboxSettings<OutboxInboxModuleOptions>,
    @Inject(INBOX_EXTRAS) private readonly extras: ResolvedInboxExtras,
    @Inject(INBOX_DATA_SOURCE) dataSource: DataSource,
  ) {
    this.unserialize = serializeSqliteTransactions(dataSource);
    const policy = settings.poison ? new PoisonPolicy(new TypeOrmPoisonStore(dataSource, extras.poisonTableName, extras.tableName), settings.poison) : undefined;
    this.inbox = new TypeOrmInbox(dataSource, new TypeOrmInboxStore(dataSource, extras.tableName), settings.runTransaction, policy);
    this.poison = policy ? new PoisonReplays(this.inbox, policy.store) : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.inbox.store.probe().catch((error: unknown) => {
      throw new OutboxConfigurationError(inboxTableMissing(this.extras.tableName, errorText(error)));
    });
    await (this.inbox.poison?.store as TypeOrmPoisonStore | undefined)?.probe().catch((error: unknown) => {
      throw new OutboxConfigurationError(poisonTableMissing(this.extras.poisonTableName, errorText(error)));
    });
    if (this.settings.pruneIntervalMs > 0) {
      this.every(this.settings.pruneIntervalMs, () => this.pruneNow(), 'Inbox pruning failed');
    }
    if (this.poison && this.settings.replayPollMs > 0) {
      const replays = this.poison;
      this.every(this.settings.replayPollMs, () => replays.runRequested(this.logger), 'Looking for requested replays failed');
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.pruning?.catch(() => undefined);
    await this.poison?.idle();
  }

  onApplicationShutdown(): void {
    this.unserialize();
  }

  /**
   * Runs `work` in a transaction unless `consumer` has already processed `message` (an outbox
   * envelope or its id). Resolves `{ duplicate: true }` for a message already processed: the caller
   * acknowledges it and moves on. If `work` throws, the transaction rolls back with the mark, and
   * the error is rethrown so the broker redelivers, until the poison policy sets the message aside:
   * then (and at once for a message without a valid id) it resolves `{ setAside: record }`, and the
   * caller acknowledges it too.
   */
  process<R>(message: { id: string } | string, consumer: string, work: (manager: EntityManager) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.inbox.process(message, consumer, work);
  }

  /** `process` for a delivery that must be a whole outbox envelope (every field's type is checked): what `@Idempotent()` uses. */
  processEnvelope<R>(message: unknown, consumer: string, work: (manager: EntityManager) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.inbox.process(message, consumer, work, 'envelope');
  }

  /** The EntityManager of the inbox transaction of the handler now running (for `@Idempotent()` handlers). */
  manager(): EntityManager {
    return this.inbox.manager();
  }

  /** Deletes marks older than `retentionMs` now; resolves with how many went. */
  pruneNow(): Promise<number> {
    this.pruning ??= this.inbox.prune(this.settings.retentionMs, this.settings.pruneBatchSize).finally(() => (this.pruning = undefined));
    return this.pruning;
  }

  private every(ms: number, task: () => Promise<unknown>, failure: string): void {
    const timer = setInterval(() => void task().catch((error: unknown) => this.logger.warn(`${failure}: ${errorText(error)}`)), ms);
    timer.unref();
    this.timers.push(timer);
  }
}
