import { Module } from '@nestjs/common';
import { resolveInboxSettings } from '../../core/inbox/inbox-settings';
import { IdempotentExplorer } from './idempotent.explorer';
import { InboxPoisonMetricsHost } from '../observe/inbox-poison-metrics.host';
import { OutboxInboxPoisonHealthIndicator } from '../observe/outbox-inbox-poison.health-indicator';
import { OutboxInbox, INBOX_SETTINGS } from './outbox-inbox';
import { ConfigurableInboxModule, INBOX_MODULE_OPTIONS } from './outbox-inbox.module-definition';
import type { OutboxInboxModuleOptions } from './outbox-inbox.options';

/**
 * The consumer side: `OutboxInboxModule.forRoot()` gives `OutboxInbox` and makes `@Idempotent()`
 * handlers work. Independent of `OutboxModule`: a consuming service needs no outbox table.
 */
@Module({
  providers: [
    { provide: INBOX_SETTINGS, inject: [INBOX_MODULE_OPTIONS], useFactory: (options: OutboxInboxModuleOptions) => resolveInboxSettings(options ?? {}) },
    OutboxInbox,
    IdempotentExplorer,
    InboxPoisonMetricsHost,
    OutboxInboxPoisonHealthIndicator,
  ],
  exports: [OutboxInbox, OutboxInboxPoisonHealthIndicator],
})
export class OutboxInboxModule extends ConfigurableInboxModule {}
