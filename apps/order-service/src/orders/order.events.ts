import { OutboxEvent } from '@nest-outbox/outbox';

export interface OrderLineSnapshot {
  sku: string;
  quantity: number;
  unitPriceCents: number;
}

@OutboxEvent('orders.order-placed')
export class OrderPlaced {
  constructor(
    readonly orderId: string,
    readonly customerId: string,
    readonly lines: OrderLineSnapshot[],
    readonly totalCents: number,
  ) {}
}

@OutboxEvent('orders.order-paid')
export class OrderPaid {
  constructor(
    readonly orderId: string,
    readonly amountCents: number,
  ) {}
}

@OutboxEvent('orders.order-cancelled')
export class OrderCancelled {
  constructor(
    readonly orderId: string,
    readonly reason: string,
  ) {}
}
