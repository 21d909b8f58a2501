import { randomUUID } from 'node:crypto';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OutboxAggregateRoot, PublishesEvents } from '@nest-outbox/outbox';
import { settings } from '../settings.js';
import { OrderPlaced } from './order-placed.event.js';

// `topic`: where its events go. Without one (here, in @OutboxEvent, in add's own `topic`, or the
// module's defaultTopic) a save fails with "No destination for event …".
@PublishesEvents({ aggregateType: 'order', topic: settings.ordersTopic })
@Entity('orders')
export class Order extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 8 })
  region: string;

  @Column({ type: 'integer' })
  totalCents: number;

  static place(region: string, totalCents: number): Order {
    const order = Object.assign(new Order(), { id: randomUUID(), region, totalCents });
    order.recordEvent(new OrderPlaced(order.id, region, totalCents));
    return order;
  }
}
