import { Module } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxInboxModule, OutboxModule } from '@nest-outbox/outbox';
import { databaseOptions } from './database/database.options.js';
import { EVENTS_CLIENT, eventsClient } from './events.options.js';
import { OrdersModule } from './orders/orders.module.js';
import { ShippingModule } from './shipping/shipping.module.js';

@Module({
  imports: [
    TypeOrmModule.forRoot(databaseOptions()),
    ClientsModule.register([eventsClient()]),
    // relayStart 'listen': the relay starts once the app listens, after its own consumer (main.ts).
    OutboxModule.forRoot({ transport: EVENTS_CLIENT, relayStart: 'listen' }),
    OutboxInboxModule.forRoot({}),
    OrdersModule,
    ShippingModule,
  ],
})
export class AppModule {}
