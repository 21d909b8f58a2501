import { Module, type DynamicModule } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxInboxModule, OutboxModule } from '@nest-outbox/outbox';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { ORDER_EVENTS_CLIENT, orderEventsClient } from './broker.options';
import type { OrderServiceConfig } from './config/order-service.config';
import { currentRequestContext } from './correlation/correlation.context';
import { databaseOptions, migratedDataSource } from './database/database.options';
import { OrderEventsModule } from './order-events/order-events.module';
import { OrdersModule } from './orders/orders.module';
import { METRICS_REGISTRY, MetricsRegistryModule } from './operations/metrics-registry.module';
import { OperationsModule } from './operations/operations.module';
import type { Registry } from 'prom-client';

@Module({})
export class AppModule {
  static register(config: OrderServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => databaseOptions(config.database),
          dataSourceFactory: (options) => migratedDataSource(options!),
        }),
        ClientsModule.register([orderEventsClient(config.broker)]),
        OutboxModule.forRootAsync({
          imports: [MetricsRegistryModule],
          inject: [METRICS_REGISTRY],
          useFactory: (registry: Registry) => ({
            transport: ORDER_EVENTS_CLIENT,
            defaultTopic: config.ordersTopic,
            relay: config.outbox.relay,
            delivery: config.outbox.delivery ?? 'table',
            // Over TCP the relay publishes to this app's own listener: serveOrderService starts it once
            // that listener is up, so a restart does not charge pending rows a refused attempt.
            relayStart: config.broker.transport === 'tcp' ? 'manual' : 'bootstrap',
            pollIntervalMs: config.outbox.pollIntervalMs,
            backoff: { initialMs: config.outbox.backoffInitialMs, maxMs: config.outbox.backoffMaxMs },
            metrics: { registry },
            // The trace of the request that wrote an event continues at its consumers.
            tracing: true,
            maxAttempts: config.outbox.maxAttempts,
            stats: { refreshIntervalMs: config.outbox.statsRefreshMs },
            health: { maxLagMs: config.outbox.healthMaxLagMs ?? 60_000 },
            // The AsyncAPI document (the console's api/asyncapi.json, nest-outbox asyncapi); its version is package.json's.
            asyncApi: { title: 'order-service', description: 'Orders placed, paid and cancelled, keyed by order id.' },
            // Carries the HTTP request's correlation and tenant ids onto every event it causes.
            enrich: () => {
              const context = currentRequestContext();
              return context && { correlationId: context.correlationId, tenantId: context.tenantId };
            },
          }),
        }),
        // The consumer records each message it handled in the inbox, in the transaction of its side effect.
        // A message that is not an envelope, or fails 5 times, is set aside (outbox_inbox_poison) so the partition moves on:
        // `/outbox` (console), `nest-outbox poison list` and the outbox_inbox_poison_messages gauge show it.
        OutboxInboxModule.forRootAsync({
          imports: [MetricsRegistryModule],
          inject: [METRICS_REGISTRY],
          useFactory: (registry: Registry) => ({ metrics: { registry } }),
        }),
        OrdersModule,
        OperationsModule,
        OrderEventsModule.register(config.ordersTopic),
        // Demo only: the console without authentication (it warns at every start). Real services pass a guard.
        ...(config.console === 'demo-no-auth' ? [OutboxConsoleModule.forRoot({ path: 'outbox', noAuth: true })] : []),
      ],
    };
  }
}
