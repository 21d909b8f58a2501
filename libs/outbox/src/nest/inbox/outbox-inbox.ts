import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { InboxOutcome } from '../../core/inbox/inbox.port';
import type { ResolvedInboxSettings } from '../../core/inbox/inbox-settings';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { inboxConnectionNeedsPoisonOff, inboxProcessNeedsTypeOrm, inboxTableMissing } from '../../core/inbox/inbox.messages';
import { poisonTableMissing } from '../../core/poison/poison.messages';
import { PoisonPolicy } from '../../core/poison/poison-policy';
import { errorText } from '../../core/error-text';
import { TypeOrmInbox } from '../../typeorm/inbox/typeorm-inbox';
import { TypeOrmInboxStore } from '../../typeorm/inbox/typeorm-inbox.store';
import { TypeOrmPoisonStore } from '../../typeorm/poison/typeorm-poison.store';
import { serializeSqliteTransactions } from '../../typeorm/sqlite/serialized-transactions';
import type { OutboxInboxModuleOptions } from './outbox-inbox.options';
import { INBOX_CONNECTION, INBOX_DATA_SOURCE, INBOX_EXTRAS, type ResolvedInboxExtras } from './outbox-inbox.module-definition';
import type { OpenedConnection } from '../../adapters/connection/open-connection';
import { toSqlTransaction, type DataLayerTransaction } from '../../adapters/data-layer-transaction';
import { SqlInbox } from '../../sql/sql-inbox';
import { SqlInboxStore } from '../../sql/inbox/sql-inbox.store';
import { pruneInBatches } from '../../core/inbox/prune-batches';
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
  /** The TypeORM inbox; `undefined` with `connection`, where handlers use `processIn`. */
  private readonly inbox: TypeOrmInbox | undefined;
  private readonly marks: SqlInbox;
  private readonly store: { probe(): Promise<void>; prune(olderThanMs: number, limit: number): Promise<number> };
  /** Recorded poison messages: list, replay, delete. `undefined` with `poison: false`. */
  readonly poison: PoisonReplays | undefined;
  private timers: NodeJS.Timeout[] = [];
  private pruning: Promise<number> | undefined;
  /** On SQLite, consumers' transactions take turns on TypeORM's one connection, with or without OutboxModule. */
  private readonly unserialize: () => void;

  constructor(
    @Inject(INBOX_SETTINGS) private readonly settings: ResolvedInboxSettings<OutboxInboxModuleOptions>,
    @Inject(INBOX_EXTRAS) private readonly extras: ResolvedInboxExtras,
    @Inject(INBOX_DATA_SOURCE) dataSource: DataSource | null,
    @Inject(INBOX_CONNECTION) private readonly opened: OpenedConnection,
  ) {
    this.marks = new SqlInbox(extras.tableName);
    if (!dataSource) {
      // With `connection`: the handlers' transactions are their data layer's, which the inbox neither opens nor sees end.
      if (settings.poison) throw new OutboxConfigurationError(inboxConnectionNeedsPoisonOff());
      this.unserialize = () => undefined;
      this.store = new SqlInboxStore(opened.connection, extras.tableName);
      return;
    }
    this.unserialize = serializeSqliteTransactions(dataSource);
    const policy = settings.poison ? new PoisonPolicy(new TypeOrmPoisonStore(dataSource, extras.poisonTableName, extras.tableName), settings.poison) : undefined;
    this.inbox = new TypeOrmInbox(dataSource, new TypeOrmInboxStore(dataSource, extras.tableName), settings.runTransaction, policy);
    this.store = this.inbox.store;
    this.poison = policy ? new PoisonReplays(this.inbox, policy.store) : undefined;
  }

  /** Whether `process`, `processEnvelope` and `@Idempotent()` are offered: on a TypeORM data source, not with `connection`. */
  get opensTransactions(): boolean {
    return this.inbox !== undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.store.probe().catch((error: unknown) => {
      throw new OutboxConfigurationError(inboxTableMissing(this.extras.tableName, errorText(error)));
    });
    await (this.inbox?.poison?.store as TypeOrmPoisonStore | undefined)?.probe().catch((error: unknown) => {
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

  async onApplicationShutdown(): Promise<void> {
    this.unserialize();
    await this.opened.close();
  }

  /**
   * Runs `work` in a transaction unless `consumer` has already processed `message` (an outbox
   * envelope or its id). Resolves `{ duplicate: true }` for a message already processed: the caller
   * acknowledges it and moves on. If `work` throws, the transaction rolls back with the mark, and
   * the error is rethrown so the broker redelivers, until the poison policy sets the message aside:
   * then (and at once for a message without a valid id) it resolves `{ setAside: record }`, and the
   * caller acknowledges it too.
   */
  async process<R>(message: { id: string } | string, consumer: string, work: (manager: EntityManager) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.typeOrm('process').process(message, consumer, work);
  }

  /**
   * Records `message` for `consumer` in `transaction`, a transaction of another data layer (Prisma,
   * Drizzle, Kysely, MikroORM, pg: what `OutboxPublisher.add` takes), and runs `work` unless it was
   * already processed: `{ duplicate: true }` then. If `work` throws, let the transaction roll back:
   * the mark goes with it, and a redelivery runs the work again. PostgreSQL and SQLite.
   */
  processIn<R>(transaction: DataLayerTransaction, message: { id: string } | string, consumer: string, work: () => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.marks.process(toSqlTransaction(transaction), message, consumer, work);
  }

  /** `process` for a delivery that must be a whole outbox envelope (every field's type is checked): what `@Idempotent()` uses. */
  async processEnvelope<R>(message: unknown, consumer: string, work: (manager: EntityManager) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.typeOrm('processEnvelope').process(message, consumer, work, 'envelope');
  }

  /** The EntityManager of the inbox transaction of the handler now running (for `@Idempotent()` handlers). */
  manager(): EntityManager {
    return this.typeOrm('manager').manager();
  }

  /** Deletes marks older than `retentionMs` now; resolves with how many went. */
  pruneNow(): Promise<number> {
    this.pruning ??= pruneInBatches((ms, limit) => this.store.prune(ms, limit), this.settings.retentionMs, this.settings.pruneBatchSize).finally(() => (this.pruning = undefined));
    return this.pruning;
  }

  private typeOrm(method: string): TypeOrmInbox {
    if (!this.inbox) throw new OutboxConfigurationError(inboxProcessNeedsTypeOrm(method));
    return this.inbox;
  }

  private every(ms: number, task: () => Promise<unknown>, failure: string): void {
    const timer = setInterval(() => void task().catch((error: unknown) => this.logger.warn(`${failure}: ${errorText(error)}`)), ms);
    timer.unref();
    this.timers.push(timer);
  }
}
