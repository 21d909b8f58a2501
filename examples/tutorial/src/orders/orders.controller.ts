import { BadRequestException, Body, Controller, Post } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Order } from './order.entity.js';

interface PlaceOrder {
  customerId: string;
  totalCents: number;
}

@Controller('orders')
export class OrdersController {
  constructor(@InjectRepository(Order) private readonly orders: Repository<Order>) {}

  @Post()
  async place(@Body() body: PlaceOrder): Promise<{ id: string }> {
    if (typeof body.customerId !== 'string' || !Number.isInteger(body.totalCents)) {
      throw new BadRequestException('Expected { "customerId": string, "totalCents": integer }');
    }
    const order = Order.place(body.customerId, body.totalCents);
    // The order row and its OrderPlaced event are written in one transaction.
    await this.orders.save(order);
    return { id: order.id };
  }
}
