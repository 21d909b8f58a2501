import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Order } from './order.entity.js';
import { OrdersController } from './orders.controller.js';

@Module({
  // The entity in both TypeORM databases: what is saved through 'eu' goes to the eu outbox, through 'us' to the us one.
  imports: [TypeOrmModule.forFeature([Order], 'eu'), TypeOrmModule.forFeature([Order], 'us')],
  controllers: [OrdersController],
})
export class OrdersModule {}
