import { randomUUID } from 'node:crypto';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OutboxAggregateRoot, PublishesEvents } from '@nest-outbox/outbox';
import { settings } from '../settings.js';
import { OrderPlaced } from './order-placed.event.js';

@PublishesEvents({ aggregateType: 'order', topic: settings.ordersTopic })
@Entity('orders')
export class Order extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 64 })
  customerId: string;

  @Column({ type: 'integer' })
  totalCents: number;

  static place(customerId: string, totalCents: number): Order {
    const order = Object.assign(new Order(), { id: randomUUID(), customerId, totalCents });
    order.recordEvent(new OrderPlaced(order.id, customerId, totalCents));
    return order;
  }
}
