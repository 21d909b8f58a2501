import { randomUUID } from 'node:crypto';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OutboxAggregateRoot, OutboxEvent, PublishesEvents } from './outbox';

// In the style of test/support/parcel.fixtures.ts, with names of their own so that the
// benchmarks do not depend on the test fixtures.

@OutboxEvent('bench.parcel-registered')
export class BenchParcelRegistered {
  constructor(
    readonly parcelId: string,
    readonly label: string,
    readonly weightGrams: number,
  ) {}
}

/** The topic comes from each benchmark's `resolveTopic`, so that every run has a topic of its own. */
@PublishesEvents({ aggregateType: 'parcel' })
@Entity('bench_parcels')
export class BenchParcel extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  label: string;

  @Column({ type: 'integer' })
  weightGrams: number;

  static register(label: string, weightGrams: number): BenchParcel {
    const parcel = new BenchParcel();
    parcel.id = randomUUID();
    parcel.label = label;
    parcel.weightGrams = weightGrams;
    parcel.recordEvent(new BenchParcelRegistered(parcel.id, label, weightGrams));
    return parcel;
  }
}
