import { Body, Controller, HttpCode, Inject, Post, UnprocessableEntityException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { OutboxPublisher } from '@nest-outbox/outbox';
import { DRIZZLE } from '../database/database.module.js';
import type { Database } from '../database/database.js';
import { orders } from '../database/schema.js';
import { settings } from '../settings.js';

interface PlaceOrder {
  customerId: string;
  totalCents: number;
}

@Controller('orders')
export class OrdersController {
  constructor(
    @Inject(DRIZZLE) private readonly db: Database,
    private readonly outbox: OutboxPublisher,
  ) {}

  /** The order and its event commit together, in Drizzle's transaction. */
  @Post()
  @HttpCode(201)
  async place(@Body() body: PlaceOrder): Promise<{ id: string }> {
    const id = randomUUID();
    await this.db.transaction(async (tx) => {
      await tx.insert(orders).values({ id, customerId: body.customerId, totalCents: body.totalCents });
      await this.outbox.add(tx, { type: 'orders.order-placed', aggregateType: 'order', aggregateId: id, payload: { id, ...body }, topic: settings.ordersTopic });
    });
    return { id };
  }

  /** The same writes, then a failure before the commit: neither the order nor its event remains. */
  @Post('rejected')
  async reject(@Body() body: PlaceOrder): Promise<never> {
    const id = randomUUID();
    return this.db.transaction(async (tx) => {
      await tx.insert(orders).values({ id, customerId: body.customerId, totalCents: body.totalCents });
      await this.outbox.add(tx, { type: 'orders.order-placed', aggregateType: 'order', aggregateId: id, payload: { id, ...body }, topic: settings.ordersTopic });
      throw new UnprocessableEntityException(`Order ${id} was rejected after its event was added: nothing of it is kept.`);
    });
  }
}
