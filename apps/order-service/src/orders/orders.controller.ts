import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { CancelOrderDto, CreateOrderDto } from './dto/create-order.dto';
import type { Order } from './order.entity';
import { OrdersService } from './orders.service';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  place(@Body() dto: CreateOrderDto): Promise<Order> {
    return this.orders.place(dto);
  }

  @Get(':id')
  find(@Param('id', ParseUUIDPipe) id: string): Promise<Order> {
    return this.orders.find(id);
  }

  @Post(':id/pay')
  @HttpCode(200)
  pay(@Param('id', ParseUUIDPipe) id: string): Promise<Order> {
    return this.orders.pay(id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id', ParseUUIDPipe) id: string, @Body() dto: CancelOrderDto): Promise<Order> {
    return this.orders.cancel(id, dto.reason ?? 'cancelled by customer');
  }
}
