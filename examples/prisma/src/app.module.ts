import { Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { OutboxModule } from '@nest-outbox/outbox';
import { OrdersController } from './orders/orders.controller.js';
import { PrismaService } from './prisma.service.js';
import { settings } from './settings.js';

@Module({
  imports: [
    ClientsModule.register([
      { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: 'orders', brokers: settings.kafkaBrokers }, producerOnlyMode: true, send: { acks: -1 } } },
    ]),
    // No TypeORM: the relay reads the outbox table over a pool the module opens from the URL (and closes at shutdown).
    OutboxModule.forRoot({ connection: { url: settings.databaseUrl }, transport: 'KAFKA' }),
  ],
  controllers: [OrdersController],
  providers: [PrismaService],
})
export class AppModule {}
