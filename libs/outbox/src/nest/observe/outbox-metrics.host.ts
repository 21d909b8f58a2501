import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type * as PromClient from 'prom-client';
import { OutboxObservers } from './outbox-observers.registry';
import { OutboxStats } from './outbox.stats';
import { OUTBOX_MODULE_OPTIONS, type ResolvedOutboxExtras } from '../outbox.module-definition';
import { OUTBOX_EXTRAS } from '../outbox.constants';
import { DEFAULT_OUTBOX_NAME } from '../../core/outbox-name';
import type { OutboxModuleOptions } from '../outbox-module.options';
import { loadOptional } from '../../core/optional-peer';
import { resolveMetricsOptions } from '../../core/observe/metrics/metrics.options';
import { OutboxMetrics } from '../../core/observe/metrics/outbox-metrics';

/** Registers the outbox metrics when `metrics` is set, and takes them out of the registry on shutdown. */
@Injectable()
export class OutboxMetricsHost implements OnModuleInit, OnModuleDestroy {
  private metrics: OutboxMetrics | undefined;

  constructor(
    @Inject(OUTBOX_MODULE_OPTIONS) private readonly options: OutboxModuleOptions,
    private readonly observers: OutboxObservers,
    private readonly stats: OutboxStats,
    @Inject(OUTBOX_EXTRAS) private readonly extras: ResolvedOutboxExtras,
  ) {}

  onModuleInit(): void {
    const resolved = resolveMetricsOptions(this.options.metrics);
    if (!resolved) return;
    const prom = loadOptional<typeof PromClient>('prom-client', 'metrics');
    this.metrics = new OutboxMetrics(prom, resolved, {
      stats: () => this.stats.snapshot(),
      activity: () => this.observers.activity.activity(),
    }, Date.now, this.extras.name ?? DEFAULT_OUTBOX_NAME);
    this.observers.add(this.metrics);
  }

  onModuleDestroy(): void {
    this.metrics?.remove();
    this.metrics = undefined;
  }
}
