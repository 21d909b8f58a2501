import { Module, type DynamicModule } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxConsoleModule, OutboxModule } from '@nest-outbox/outbox';
import { ORDER_EVENTS_CLIENT, orderEventsClient } from './broker.options';
import type { OrderServiceConfig } from './config/order-service.config';
import { currentRequestContext } from './correlation/correlation.context';
import { databaseOptions } from './database/database.options';
import { OrderEventsModule } from './order-events/order-events.module';
import { OrdersModule } from './orders/orders.module';

@Module({})
export class AppModule {
  static register(config: OrderServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot(databaseOptions(config.database)),
        ClientsModule.register([orderEventsClient(config.broker)]),
        OutboxModule.forRootAsync({
          useFactory: () => ({
            transport: ORDER_EVENTS_CLIENT,
            defaultTopic: config.ordersTopic,
            relay: config.outbox.relay,
            pollIntervalMs: config.outbox.pollIntervalMs,
            backoff: { initialMs: config.outbox.backoffInitialMs, maxMs: config.outbox.backoffMaxMs },
            // Carries the HTTP request's correlation and tenant ids onto every event it causes.
            enrich: () => {
              const context = currentRequestContext();
              return context && { correlationId: context.correlationId, tenantId: context.tenantId };
            },
          }),
        }),
        OrdersModule,
        OrderEventsModule.register(config.ordersTopic),
        // Demo only: the console without authentication (it warns at every start). Real services pass a guard.
        ...(config.console === 'demo-no-auth' ? [OutboxConsoleModule.forRoot({ path: 'outbox', noAuth: true })] : []),
      ],
    };
  }
}
