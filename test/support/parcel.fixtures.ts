import { randomUUID } from 'node:crypto';
import { Column, DeleteDateColumn, Entity, ManyToOne, OneToMany, PrimaryColumn } from 'typeorm';
import { OutboxAggregateRoot, OutboxEvent, PublishesEvents } from '@nest-outbox/outbox';

@OutboxEvent('parcels.parcel-registered')
export class ParcelRegistered {
  constructor(
    readonly parcelId: string,
    readonly weightGrams: number,
  ) {}
}

@OutboxEvent('parcels.parcel-relabelled', { version: 2 })
export class ParcelRelabelled {
  constructor(
    readonly parcelId: string,
    readonly label: string,
  ) {}
}

@OutboxEvent('parcels.parcel-discarded')
export class ParcelDiscarded {
  constructor(readonly parcelId: string) {}
}

/** A non-aggregate parent: saving it cascades to parcels. */
@Entity('shipments')
export class Shipment {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string = randomUUID();

  @OneToMany(() => Parcel, (parcel) => parcel.shipment, { cascade: true })
  parcels: Parcel[];
}

@PublishesEvents({ aggregateType: 'parcel', topic: 'parcels' })
@Entity('parcels')
export class Parcel extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  label: string;

  @Column({ type: 'integer' })
  weightGrams: number;

  @ManyToOne(() => Shipment, (shipment) => shipment.parcels, { nullable: true })
  shipment?: Shipment;

  @DeleteDateColumn({ nullable: true })
  deletedAt?: Date;

  static register(label: string, weightGrams: number): Parcel {
    const parcel = new Parcel();
    parcel.id = randomUUID();
    parcel.label = label;
    parcel.weightGrams = weightGrams;
    parcel.recordEvent(new ParcelRegistered(parcel.id, weightGrams));
    return parcel;
  }

  relabel(label: string): void {
    this.label = label;
    this.recordEvent(new ParcelRelabelled(this.id, label));
  }

  discard(): void {
    this.recordEvent(new ParcelDiscarded(this.id));
  }
}

export const PARCEL_ENTITIES = [Parcel, Shipment];
