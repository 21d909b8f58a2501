import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { OutboxEntitySubscriber } from '../typeorm/outbox-entity.subscriber';
import type { OutboxTransactionTracker } from '../typeorm/outbox-transaction.tracker';
import type { TypeOrmOutboxWriter } from '../typeorm/typeorm-outbox.writer';
import { guardUnchangedSaves } from '../typeorm/unchanged-save.guard';
import { OUTBOX_DATA_SOURCE, OUTBOX_TRACKER, OUTBOX_WRITER } from './outbox.constants';
import { OutboxRelayHost } from './outbox-relay.host';

/** Hooks the outbox subscriber into the data source; a commit that wrote rows wakes this instance's relay. */
@Injectable()
export class OutboxSubscriberRegistrar implements OnModuleInit, OnModuleDestroy {
  private unguard: (() => void) | undefined;

  constructor(
    @Inject(OUTBOX_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(OUTBOX_WRITER) private readonly writer: TypeOrmOutboxWriter,
    @Inject(OUTBOX_TRACKER) private readonly tracker: OutboxTransactionTracker,
    private readonly relayHost: OutboxRelayHost,
  ) {}

  onModuleInit(): void {
    const subscriber = new OutboxEntitySubscriber(this.writer, this.tracker, () => void this.relayHost.drain());
    this.dataSource.subscribers.push(subscriber);
    this.unguard = guardUnchangedSaves(this.dataSource, (manager, entity, target) => subscriber.afterSave(manager, entity, target));
  }

  onModuleDestroy(): void {
    this.unguard?.();
  }
}
