import { type DynamicModule, Module } from '@nestjs/common';
import { rejectUnknownOptionKeys } from '../core/option-keys';
import { resolveOutboxSettings } from '../core/outbox-options';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import { OutboxTransactionTracker } from '../typeorm/outbox-transaction.tracker';
import { OUTBOX_CONNECTION, OUTBOX_DATA_SOURCE, OUTBOX_DELIVERY, OUTBOX_EXTRAS, OUTBOX_OPENED_CONNECTION, OUTBOX_SETTINGS, OUTBOX_TRACKER } from './outbox.constants';
import { resolveDeliveryPlan } from '../delivery/delivery-modes';
import { OutboxConnectionHost } from './outbox-connection.host';
import type { OpenedConnection } from '../adapters/connection/open-connection';
import {
  ConfigurableOutboxModule,
  OUTBOX_ASYNC_OPTIONS_TYPE,
  OUTBOX_MODULE_OPTIONS,
  OUTBOX_OPTIONS_TYPE,
  type ResolvedOutboxExtras,
} from './outbox.module-definition';
import type { OutboxModuleExtras, OutboxModuleOptions } from './outbox-module.options';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { staticOptionFromFactory } from '../core/outbox.messages';
import { partitioningNeedsPostgres } from '../core/partitioning/partitioning.messages';
import { OutboxPublisher } from './outbox.publisher';
import { AmbientTransactionResolver } from './ambient/ambient-transaction.resolver';
import { defaultRelayId, OutboxRelayHost } from './outbox-relay.host';
import { OutboxSubscriberRegistrar } from './outbox-subscriber.registrar';
import { OutboxAdmin } from './outbox.admin';
import { OutboxCleanupHost } from './outbox-cleanup.host';
import { resolveObservability } from '../core/observe/observability.options';
import { OutboxObservers } from './observe/outbox-observers.registry';
import { OutboxStats } from './observe/outbox.stats';
import { OUTBOX_OBSERVABILITY } from './outbox.constants';
import { OutboxMetricsHost } from './observe/outbox-metrics.host';
import { OutboxHealthIndicator } from './observe/outbox.health-indicator';
import { OutboxTracingHost } from './observe/outbox-tracing.host';
import { InProcessHandlers } from './in-process/in-process-handlers';
import { InProcessHandlersExplorer } from './in-process/in-process-handlers.explorer';
import { checkTransportOptions } from './outbox-transports.resolver';
import { outboxTransactionOfProvider, outboxWriterProvider } from './outbox-writer.provider';
import { OutboxStreamHost } from './outbox-stream.host';
import { outboxStreamProvider } from './outbox-stream.provider';
import { OutboxWalHealthIndicator } from './observe/outbox-wal.health-indicator';
import { OutboxAsyncApi } from './asyncapi/outbox-asyncapi.service';
import { isDescribing } from '../core/asyncapi/describe-mode';
import { OUTBOX_ASYNCAPI } from '../core/asyncapi/asyncapi-source';
import { outboxExports, type OutboxInjectable } from './named/outbox-tokens';
import { outboxRegistrationProvider } from './named/outbox-registration.provider';
import { OutboxSchemasHost, outboxSchemasProvider } from './schema-registry/outbox-schemas.provider';
import { resolveSchemaRegistryOptions } from '../core/schema-registry/schema-registry.options';

/**
 * `OutboxModule.forRoot({ transport: 'KAFKA' })` or `forRootAsync({ useFactory, inject })`.
 * Static extras (`tableName`, `schema`, `dataSource`, `isGlobal`) go next to the options in both forms.
 */
@Module({
  providers: [
    {
      provide: OUTBOX_SETTINGS,
      inject: [OUTBOX_MODULE_OPTIONS],
      useFactory: (options: OutboxModuleOptions) => {
        // forRootAsync factories are checked here; forRoot options were checked when declared.
        rejectUnknownOptionKeys(options);
        rejectStaticOptionsFromFactory(options);
        // `nest-outbox asyncapi` loads the app to read its options: nothing is relayed meanwhile.
        return resolveOutboxSettings(isDescribing() ? { ...options, relay: false } : options, defaultRelayId);
      },
    },
    // The one place the module reads `delivery`.
    {
      provide: OUTBOX_DELIVERY,
      inject: [OUTBOX_SETTINGS, OUTBOX_EXTRAS],
      useFactory: (settings: ResolvedOutboxSettings, extras: ResolvedOutboxExtras) => resolveDeliveryPlan(settings, extras),
    },
    {
      provide: OUTBOX_OBSERVABILITY,
      inject: [OUTBOX_MODULE_OPTIONS, OUTBOX_SETTINGS],
      useFactory: (options: OutboxModuleOptions, settings: ResolvedOutboxSettings) => resolveObservability(options, settings),
    },
    {
      provide: OUTBOX_CONNECTION,
      inject: [OUTBOX_OPENED_CONNECTION, OUTBOX_SETTINGS],
      useFactory: (opened: OpenedConnection, settings: ResolvedOutboxSettings) => {
        // On every instance, relaying or not: a MariaDB or SQLite outbox told to partition fails at startup.
        if (settings.partitioning !== undefined && opened.connection.dialect !== 'postgres') {
          throw new OutboxConfigurationError(partitioningNeedsPostgres(opened.connection.dialect));
        }
        return opened.connection;
      },
    },
    OutboxConnectionHost,
    { provide: OUTBOX_TRACKER, useFactory: () => new OutboxTransactionTracker() },
    outboxWriterProvider,
    outboxTransactionOfProvider,
    OutboxRelayHost,
    outboxStreamProvider,
    OutboxStreamHost,
    InProcessHandlers,
    InProcessHandlersExplorer,
    OutboxCleanupHost,
    OutboxSubscriberRegistrar,
    OutboxPublisher,
    AmbientTransactionResolver,
    OutboxAdmin,
    OutboxObservers,
    OutboxStats,
    OutboxMetricsHost,
    OutboxTracingHost,
    OutboxHealthIndicator,
    OutboxWalHealthIndicator,
    OutboxAsyncApi,
    { provide: OUTBOX_ASYNCAPI, useExisting: OutboxAsyncApi },
    outboxRegistrationProvider,
    outboxSchemasProvider,
    OutboxSchemasHost,
  ],
})
export class OutboxModule extends ConfigurableOutboxModule {
  /**
   * Refuses, where the module is declared and before any module connects, every mistake that needs
   * none of the app's providers: a missing options object, misspelled keys, bad values, a value that
   * is no transport, a route to an unknown transport. A transport token is looked up at init.
   */
  static forRoot(options: typeof OUTBOX_OPTIONS_TYPE): DynamicModule {
    rejectUnknownOptionKeys(options);
    resolveObservability(options, resolveOutboxSettings(options, defaultRelayId));
    checkTransportOptions(options);
    if (options.schemaRegistry !== undefined) resolveSchemaRegistryOptions(options.schemaRegistry);
    return withExports(super.forRoot(options), options.name);
  }

  static forRootAsync(options: typeof OUTBOX_ASYNC_OPTIONS_TYPE): DynamicModule {
    if (options === null || typeof options !== 'object') rejectUnknownOptionKeys(options);
    return withExports(super.forRootAsync(options), options.name);
  }
}

// The connection, data source and extras are exported for OutboxConsoleModule, which works on the same table.
const EXPORTED: readonly OutboxInjectable[] = [
  OutboxPublisher, OutboxRelayHost, OutboxAdmin, OutboxCleanupHost, OutboxStats, OutboxObservers, OutboxHealthIndicator, OutboxWalHealthIndicator,
  OutboxAsyncApi, OUTBOX_ASYNCAPI,
  OUTBOX_DATA_SOURCE, OUTBOX_CONNECTION, OUTBOX_EXTRAS,
];

/** Exports by class for the outbox without a name; a named one exports them under its name only (see `getOutboxToken`). */
function withExports(module: DynamicModule, name: unknown): DynamicModule {
  // An invalid name is refused by the module definition, which has run by now.
  const { providers, exports } = outboxExports(EXPORTED, name as string | undefined);
  return { ...module, providers: [...(module.providers ?? []), ...providers], exports: [...(module.exports ?? []), ...exports] };
}

// The extras with a default in the module definition: Nest takes these out of forRoot's options.
const STATIC_OPTIONS = ['tableName', 'schema', 'connection', 'isGlobal', 'name'] as const satisfies readonly (keyof OutboxModuleExtras)[];

/**
 * Extras Nest takes out of forRoot's options can only reach them from a forRootAsync factory's
 * result, after the module was declared without them: they would be ignored.
 */
function rejectStaticOptionsFromFactory(options: OutboxModuleOptions): void {
  const found = STATIC_OPTIONS.find((key) => Object.prototype.hasOwnProperty.call(options, key));
  if (found) throw new OutboxConfigurationError(staticOptionFromFactory(found));
}
