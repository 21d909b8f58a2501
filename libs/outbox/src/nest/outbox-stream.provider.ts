import { Logger, type Provider } from '@nestjs/common';
import { isDescribing } from '../core/asyncapi/describe-mode';
import { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { OutboxConfigurationError } from '../core/outbox.errors';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import type { ResolvedObservability } from '../core/observe/observability.options';
import type { SqlConnection } from '../core/sql-connection.port';
import type { DeliveryPlan } from '../core/stream/delivery-plan';
import type { DeliveryStream } from '../core/stream/delivery-stream.port';
import { walNeedsPostgres } from '../core/stream/stream.messages';
import { connectionWalNeedsPg } from '../adapters/connection/connection.messages';
import { resolveMetricsOptions } from '../core/observe/metrics/metrics.options';
import { InProcessHandlers } from './in-process/in-process-handlers';
import { OutboxObservers } from './observe/outbox-observers.registry';
import { OUTBOX_CONNECTION, OUTBOX_DATA_SOURCE, OUTBOX_DELIVERY, OUTBOX_EXTRAS, OUTBOX_OBSERVABILITY, OUTBOX_SETTINGS, OUTBOX_STREAM } from './outbox.constants';
import { OUTBOX_MODULE_OPTIONS, type ResolvedOutboxExtras } from './outbox.module-definition';
import type { OutboxModuleOptions } from './outbox-module.options';
import { resolveTransports } from './outbox-transports.resolver';

/**
 * The delivery's stream, made by the delivery plan of a streaming mode, or `null` in the table
 * mode, where nothing of a streaming mode is made or loaded. `OutboxStreamHost` runs it; stats and
 * health read it.
 */
export const outboxStreamProvider: Provider = {
  provide: OUTBOX_STREAM,
  inject: [OUTBOX_DELIVERY, OUTBOX_SETTINGS, OUTBOX_MODULE_OPTIONS, OUTBOX_EXTRAS, OUTBOX_CONNECTION, OUTBOX_DATA_SOURCE, OUTBOX_OBSERVABILITY, ModuleRef, OutboxObservers, InProcessHandlers],
  useFactory: (
    plan: DeliveryPlan,
    settings: ResolvedOutboxSettings,
    options: OutboxModuleOptions,
    extras: ResolvedOutboxExtras,
    connection: SqlConnection,
    dataSource: DataSource | null,
    observability: ResolvedObservability,
    moduleRef: ModuleRef,
    observers: OutboxObservers,
    inProcessHandlers: InProcessHandlers,
  ): DeliveryStream | null => {
    // Describe mode (`nest-outbox asyncapi`) streams nothing, as it relays nothing.
    if (plan.mode !== 'wal' || isDescribing()) return null;
    // At construction, before any module's init hook: the table relay's startup probe, which runs
    // first, would otherwise hide the real mistake behind a missing-table error.
    if (connection.dialect !== 'postgres') {
      throw new OutboxConfigurationError(dataSource ? walNeedsPostgres(dataSource.options.type) : connectionWalNeedsPg(connection.layer));
    }
    return plan.createStream({
      settings,
      table: extras,
      connection,
      transports: () => resolveTransports(options, moduleRef, inProcessHandlers.transport()),
      observer: () => observers.combined(),
      logger: new Logger('Outbox'),
      metrics: resolveMetricsOptions(options.metrics),
      lagReadingMs: observability.stats.refreshIntervalMs,
    });
  },
};
