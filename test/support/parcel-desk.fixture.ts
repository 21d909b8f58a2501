import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { OutboxPublisher } from '@nest-outbox/outbox';
import { Parcel } from './parcel.fixtures';

/** A service that saves and adds in the ambient transaction of @nestjs-cls/transactional. */
@Injectable()
export class ParcelDesk {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly outbox: OutboxPublisher,
  ) {}

  @Transactional()
  async register(parcel: Parcel, failAfterWrite = false): Promise<void> {
    await this.txHost.tx.getRepository(Parcel).save(parcel);
    await this.outbox.add({ type: 'parcels.desk-noted', aggregateType: 'parcel', aggregateId: parcel.id, payload: { by: 'desk' }, topic: 'parcels' });
    if (failAfterWrite) throw new Error('desk refused after writing');
  }

  /** No @Transactional(): there is no ambient transaction to add to. */
  async noteOutsideTransaction(parcelId: string): Promise<string[]> {
    return this.outbox.add({ type: 'parcels.desk-noted', aggregateType: 'parcel', aggregateId: parcelId, payload: {}, topic: 'parcels' });
  }
}
