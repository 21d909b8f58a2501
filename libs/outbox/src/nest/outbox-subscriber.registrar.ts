import { Inject, Injectable, OnApplicationShutdown, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { OutboxEntitySubscriber } from '../typeorm/outbox-entity.subscriber';
import type { OutboxTransactionTracker } from '../typeorm/outbox-transaction.tracker';
import type { SqlOutboxWriter } from '../sql/sql-outbox.writer';
import type { SqlTransactionOf } from '../adapters/data-layer-transaction';
import { serializeSqliteTransactions } from '../typeorm/sqlite/serialized-transactions';
import { guardUnchangedSaves } from '../typeorm/unchanged-save.guard';
import { OUTBOX_DATA_SOURCE, OUTBOX_DELIVERY, OUTBOX_TRACKER, OUTBOX_TRANSACTION_OF, OUTBOX_WRITER } from './outbox.constants';
import type { DeliveryPlan } from '../core/stream/delivery-plan';
import { OutboxRelayHost } from './outbox-relay.host';

/**
 * Hooks the outbox subscriber into the data source; a commit that wrote rows wakes this instance's
 * relay. On SQLite, transactions of the data source take turns on its one connection from here on.
 */
@Injectable()
export class OutboxSubscriberRegistrar implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  private unguard: (() => void) | undefined;
  private unserialize: (() => void) | undefined;

  constructor(
    @Inject(OUTBOX_DATA_SOURCE) private readonly dataSource: DataSource | null,
    @Inject(OUTBOX_WRITER) private readonly writer: SqlOutboxWriter,
    @Inject(OUTBOX_TRANSACTION_OF) private readonly transactionOf: SqlTransactionOf,
    @Inject(OUTBOX_TRACKER) private readonly tracker: OutboxTransactionTracker,
    private readonly relayHost: OutboxRelayHost,
    @Inject(OUTBOX_DELIVERY) private readonly delivery: DeliveryPlan,
  ) {}

  onModuleInit(): void {
    // With `connection` there is no TypeORM data source: events come only through OutboxPublisher.add(tx, …).
    if (!this.dataSource) return;
    // The WAL mode's commits reach the stream, not the table relay (delayed rows wake it when due):
    // a claim after each commit would walk the stream's rows in flight, for nothing.
    const wake = this.delivery.mode === 'wal' ? () => undefined : () => void this.relayHost.drain();
    const subscriber = new OutboxEntitySubscriber(this.writer, this.transactionOf, this.tracker, wake);
    this.unserialize = serializeSqliteTransactions(this.dataSource);
    this.dataSource.subscribers.push(subscriber);
    this.unguard = guardUnchangedSaves(this.dataSource, (manager, entity, target) => subscriber.afterSave(manager, entity, target));
  }

  onModuleDestroy(): void {
    this.unguard?.();
  }

  // Not at module destroy: the relay drains, and the app's last transactions end, after that.
  onApplicationShutdown(): void {
    this.unserialize?.();
  }
}
