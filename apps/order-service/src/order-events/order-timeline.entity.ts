import { Column, Entity, PrimaryColumn } from 'typeorm';

/** What the consumer does with an order event: a timeline entry, written once per message through the inbox. */
@Entity('order_timeline')
export class OrderTimelineEntry {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  messageId!: string;

  @Column({ type: 'varchar', length: 36 })
  orderId!: string;

  @Column({ type: 'varchar', length: 255 })
  eventType!: string;

  @Column({ type: 'varchar', length: 32 })
  occurredAt!: string;
}
