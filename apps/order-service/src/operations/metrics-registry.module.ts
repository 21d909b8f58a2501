import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';

export const METRICS_REGISTRY = Symbol('order-service:metrics-registry');

/**
 * The app's prom-client registry: the outbox registers its metrics into it and `/metrics` serves
 * it. One per app (not prom-client's global one), so that two instances in one process never clash.
 */
@Module({
  providers: [{ provide: METRICS_REGISTRY, useFactory: () => new Registry() }],
  exports: [METRICS_REGISTRY],
})
export class MetricsRegistryModule {}
