import { BadRequestException, Body, Controller, Param, Post } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Order } from './order.entity.js';

@Controller('orders')
export class OrdersController {
  constructor(
    @InjectRepository(Order, 'eu') private readonly euOrders: Repository<Order>,
    @InjectRepository(Order, 'us') private readonly usOrders: Repository<Order>,
  ) {}

  /** `POST /orders/eu` or `/orders/us`: the order and its event commit in that region's database, and its outbox relays the event. */
  @Post(':region')
  async place(@Param('region') region: string, @Body() body: { totalCents: number }): Promise<{ id: string }> {
    const orders = region === 'eu' ? this.euOrders : region === 'us' ? this.usOrders : undefined;
    if (!orders || !Number.isInteger(body.totalCents)) throw new BadRequestException('POST /orders/eu or /orders/us with { "totalCents": integer }');
    const order = Order.place(region, body.totalCents);
    await orders.save(order);
    return { id: order.id };
  }
}
