import { Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { OutboxModule } from '@nest-outbox/outbox';
import { pool } from './database/database.js';
import { DatabaseModule } from './database/database.module.js';
import { OrdersController } from './orders/orders.controller.js';
import { settings } from './settings.js';

@Module({
  imports: [
    DatabaseModule,
    ClientsModule.register([
      { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: 'orders', brokers: settings.kafkaBrokers }, producerOnlyMode: true, send: { acks: -1 } } },
    ]),
    // No TypeORM: the relay reads the outbox table over Drizzle's own pg pool.
    OutboxModule.forRoot({ connection: { pool }, transport: 'KAFKA' }),
  ],
  controllers: [OrdersController],
})
export class AppModule {}
