import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { InboxOutcome } from '../../core/inbox/inbox.port';
import type { ResolvedInboxSettings } from '../../core/inbox/inbox-settings';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { inboxTableMissing } from '../../core/inbox/inbox.messages';
import { errorText } from '../../core/error-text';
import { TypeOrmInbox } from '../../typeorm/inbox/typeorm-inbox';
import { TypeOrmInboxStore } from '../../typeorm/inbox/typeorm-inbox.store';
import type { OutboxInboxModuleOptions } from './outbox-inbox.options';
import { INBOX_DATA_SOURCE, INBOX_EXTRAS, type ResolvedInboxExtras } from './outbox-inbox.module-definition';

export const INBOX_SETTINGS = Symbol('outbox:inbox-settings');

/**
 * The idempotent-consumer API: `process(envelope, 'consumer-name', (manager) => work)` runs the
 * work once per message and consumer, in a transaction that also records the message as seen.
 * Prunes old marks on a schedule.
 */
@Injectable()
export class OutboxInbox implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OutboxInbox');
  private readonly inbox: TypeOrmInbox;
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<number> | undefined;

  constructor(
    @Inject(INBOX_SETTINGS) private readonly settings: ResolvedInboxSettings<OutboxInboxModuleOptions>,
    @Inject(INBOX_EXTRAS) private readonly extras: ResolvedInboxExtras,
    @Inject(INBOX_DATA_SOURCE) dataSource: DataSource,
  ) {
    this.inbox = new TypeOrmInbox(dataSource, new TypeOrmInboxStore(dataSource, extras.tableName), settings.runTransaction);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.inbox.store.probe().catch((error: unknown) => {
      throw new OutboxConfigurationError(inboxTableMissing(this.extras.tableName, errorText(error)));
    });
    if (this.settings.pruneIntervalMs > 0) {
      this.timer = setInterval(() => void this.pruneNow().catch((error: unknown) => this.logger.warn(`Inbox pruning failed: ${errorText(error)}`)), this.settings.pruneIntervalMs);
      this.timer.unref();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.pruning?.catch(() => undefined);
  }

  /**
   * Runs `work` in a transaction unless `consumer` has already processed `message` (an outbox
   * envelope or its id). Resolves `{ duplicate: true }` for a message already processed: the caller
   * acknowledges it and moves on. If `work` throws, the transaction rolls back with the mark, and
   * a redelivery runs it again.
   */
  process<R>(message: { id: string } | string, consumer: string, work: (manager: EntityManager) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.inbox.process(message, consumer, work);
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
}
