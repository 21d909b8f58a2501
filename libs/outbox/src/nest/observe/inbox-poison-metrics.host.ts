import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type * as PromClient from 'prom-client';
import type { ResolvedInboxSettings } from '../../core/inbox/inbox-settings';
import { INBOX_SETTINGS, OutboxInbox } from '../inbox/outbox-inbox';
import type { OutboxInboxModuleOptions } from '../inbox/outbox-inbox.options';
import { loadOptional } from '../../core/optional-peer';
import { resolveMetricsOptions } from '../../core/observe/metrics/metrics.options';
import { InboxPoisonMetrics } from '../../core/observe/metrics/inbox-poison-metrics';

/** Registers the inbox's poison gauge when `OutboxInboxModule` has `metrics` set and the poison policy on; removes it on shutdown. */
@Injectable()
export class InboxPoisonMetricsHost implements OnModuleInit, OnModuleDestroy {
  private metrics: InboxPoisonMetrics | undefined;

  constructor(
    @Inject(INBOX_SETTINGS) private readonly settings: ResolvedInboxSettings<OutboxInboxModuleOptions>,
    private readonly inbox: OutboxInbox,
  ) {}

  onModuleInit(): void {
    const resolved = resolveMetricsOptions(this.settings.metrics);
    const poison = this.inbox.poison;
    if (!resolved || !poison) return;
    this.metrics = new InboxPoisonMetrics(loadOptional<typeof PromClient>('prom-client', 'metrics'), resolved, () => poison.counts());
  }

  onModuleDestroy(): void {
    this.metrics?.remove();
    this.metrics = undefined;
  }
}
