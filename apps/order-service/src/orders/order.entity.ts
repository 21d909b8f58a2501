import { randomUUID } from 'node:crypto';
import { Column, CreateDateColumn, Entity, ManyToOne, OneToMany, PrimaryColumn, PrimaryGeneratedColumn, VersionColumn, type Relation } from 'typeorm';
import { OutboxAggregateRoot, PublishesEvents } from '@nest-outbox/outbox';
import { OrderCancelled, OrderPaid, OrderPlaced, type OrderLineSnapshot } from './order.events';

export type OrderStatus = 'placed' | 'paid' | 'cancelled';

export class OrderStateError extends Error {
  override readonly name = 'OrderStateError';
}

/** The total is stored as a 32-bit integer. */
export const MAX_TOTAL_CENTS = 2_147_483_647;

@Entity('order_lines')
export class OrderLine {
  @PrimaryGeneratedColumn()
  id: number;

  @ManyToOne(() => Order, (order) => order.lines, { onDelete: 'CASCADE' })
  order: Relation<Order>;

  @Column({ type: 'varchar', length: 64 })
  sku: string;

  @Column({ type: 'integer' })
  quantity: number;

  @Column({ type: 'integer' })
  unitPriceCents: number;
}

/** The order aggregate: every state change records the event that tells the world about it. */
@PublishesEvents({ aggregateType: 'order' })
@Entity('orders')
export class Order extends OutboxAggregateRoot {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 64 })
  customerId: string;

  @Column({ type: 'varchar', length: 16 })
  status: OrderStatus;

  @Column({ type: 'integer' })
  totalCents: number;

  @OneToMany(() => OrderLine, (line) => line.order, { cascade: true, eager: true })
  lines: OrderLine[];

  @CreateDateColumn()
  createdAt: Date;

  @VersionColumn()
  version: number;

  static place(customerId: string, lines: OrderLineSnapshot[]): Order {
    const order = new Order();
    order.id = randomUUID();
    order.customerId = customerId;
    order.status = 'placed';
    order.lines = lines.map((snapshot) => Object.assign(new OrderLine(), snapshot));
    order.totalCents = lines.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0);
    if (order.totalCents > MAX_TOTAL_CENTS) {
      throw new OrderStateError(`The order total ${order.totalCents} cents is over the limit of ${MAX_TOTAL_CENTS} cents.`);
    }
    order.recordEvent(new OrderPlaced(order.id, customerId, lines, order.totalCents));
    return order;
  }

  pay(): void {
    if (this.status !== 'placed') throw new OrderStateError(`Order ${this.id} is ${this.status}; only a placed order can be paid.`);
    this.status = 'paid';
    this.recordEvent(new OrderPaid(this.id, this.totalCents));
  }

  cancel(reason: string): void {
    if (this.status === 'cancelled') throw new OrderStateError(`Order ${this.id} is already cancelled.`);
    this.status = 'cancelled';
    this.recordEvent(new OrderCancelled(this.id, reason));
  }
}
