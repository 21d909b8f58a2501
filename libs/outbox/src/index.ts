// What an application imports. The rest lives behind subpaths, each with its own entry point:
//   @nest-outbox/outbox/testing        the testing kit and the store/transport contract suites
//   @nest-outbox/outbox/console        the operator console (page + REST) and its migrations
//   @nest-outbox/outbox/observability  stats, metrics, health indicators, tracing, relay observers
//   @nest-outbox/outbox/core           ports, relay and policies for custom stores, transports and relays
//   @nest-outbox/outbox/typeorm        the TypeORM pieces for use without OutboxModule
//   @nest-outbox/outbox/kafka          ConfluentKafkaTransport: Kafka on librdkafka (optional peer @confluentinc/kafka-javascript)
//   @nest-outbox/outbox/asyncapi       OutboxAsyncApi: the AsyncAPI 3.0 document of what the app publishes
//   @nest-outbox/outbox/tenants        several outboxes beyond @InjectOutbox: tenant databases, shards, tokens by name
// index.spec.ts holds this list: a name added here must be added there, and the root stays at 40 names at most.
// Nothing here may load an optional peer (prom-client, @nestjs/terminus, OpenTelemetry, ...), even as a type.

// Module, publisher, operations from code
export { OutboxModule } from './nest/outbox.module';
export type { OutboxModuleOptions, OutboxModuleExtras } from './nest/outbox-module.options';
export type { OutboxConnectionOptions } from './adapters/connection/outbox-connection.options';
export { OutboxPublisher } from './nest/outbox.publisher';
export { InjectOutbox } from './nest/named/outbox-tokens';
export type { OutboxMessageInput } from './core/outbox-message-input';
export type { OutboxDataLayerTransaction } from './adapters/data-layer-transaction';
export { OutboxRelayHost } from './nest/outbox-relay.host';
export { OutboxAdmin } from './nest/outbox.admin';
export type { OutboxTransport } from './core/outbox-transport.port';
export { JetStreamTransport, type JetStreamTransportOptions } from './transports/jetstream.transport';

// Aggregates and events
export { PublishesEvents } from './decorators/publishes-events.decorator';
export { OutboxEvent, type OutboxEventOptions } from './decorators/outbox-event.decorator';
export type { PublishesEventsOptions } from './core/event-metadata';
export { OutboxAggregateRoot, WithOutboxEvents, recordEvent } from './core/recorded-events';
export type { OutboxEnvelope, RecordEventOptions } from './core/outbox-message';
export { isOutboxEnvelope } from './core/poison/poison-decoding';
export { toOutboxEvent } from './core/typed/to-outbox-event';
export { OutboxEventPipe } from './nest/typed/outbox-event.pipe';
export { OnOutboxEvent } from './nest/in-process/on-outbox-event.decorator';

// Consumer side: the inbox
export { OutboxInboxModule } from './nest/inbox/outbox-inbox.module';
export type { OutboxInboxModuleOptions } from './nest/inbox/outbox-inbox.options';
export { OutboxInbox } from './nest/inbox/outbox-inbox';
export { Idempotent } from './nest/inbox/idempotent.decorator';
export { OutboxDataLayerInbox } from './adapters/data-layer-inbox';

// Errors
export { OutboxConfigurationError, OutboxWriteError, OutboxAdminError, OutboxNonRetryableError } from './core/outbox.errors';
export { OutboxEventValidationError } from './core/typed/to-outbox-event';

// Migrations (TypeORM); for other table names: createOutboxTableMigration & co. in '@nest-outbox/outbox/typeorm'
export { CreateOutboxTable } from './typeorm/create-outbox-table.migration';
export { CreateInboxTable } from './typeorm/inbox/create-inbox-table.migration';
export { CreateInboxPoisonTable } from './typeorm/poison/create-poison-table.migration';

// Process shutdown with a deadline (use instead of app.enableShutdownHooks())
export { enableBoundedShutdown } from './nest/shutdown/bounded-shutdown';
