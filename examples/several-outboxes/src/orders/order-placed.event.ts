import { OutboxEvent } from '@nest-outbox/outbox';

// The stable name consumers see; class names change under refactoring, topic contracts must not.
@OutboxEvent('orders.order-placed')
export class OrderPlaced {
  constructor(
    readonly orderId: string,
    readonly region: string,
    readonly totalCents: number,
  ) {}
}
