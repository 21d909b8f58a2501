// Module and injectables
export { OutboxModule } from './nest/outbox.module';
export type { OutboxModuleOptions, OutboxModuleExtras, OutboxTransportOption } from './nest/outbox-module.options';
export { OutboxPublisher } from './nest/outbox.publisher';
export { OutboxRelayHost } from './nest/outbox-relay.host';
export { OutboxAdmin } from './nest/outbox.admin';
export { OutboxCleanupHost } from './nest/outbox-cleanup.host';
export type { DeadMessage } from './core/outbox-maintenance.port';

// Observing the outbox
export { OutboxStats } from './nest/observe/outbox.stats';
export { OutboxObservers } from './nest/observe/outbox-observers.registry';
export type { OutboxStatsSnapshot, OutboxDestinationStats, RelayActivity } from './core/stats/outbox-stats';
export type { OutboxStatsSource, DestinationCounts } from './core/stats/outbox-stats.port';
export { OutboxStatsReader } from './core/stats/outbox-stats.reader';
export type { StatsOptions, HealthThresholds } from './core/observe/observability.options';
export { OBSERVABILITY_LIMITS } from './core/observe/observability.options';
export type { RelayObserver, SettledBatch, MessageOutcome, RoundEnd } from './core/observe/relay-observer';
export {
  OUTBOX_CHANNELS,
  type OutboxClaimedEvent,
  type OutboxPublishedEvent,
  type OutboxFailedEvent,
  type OutboxLeaseLostEvent,
} from './core/observe/outbox.channels';
export { OutboxHealthIndicator } from './observability/health/outbox.health-indicator';
export { OutboxInboxPoisonHealthIndicator } from './observability/health/outbox-inbox-poison.health-indicator';
export { DEFAULT_LATENCY_BUCKETS, resolveMetricsOptions, type OutboxMetricsOptions, type MetricsRegistry } from './observability/metrics/metrics.options';
export { OutboxMetrics, type OutboxMetricsSources } from './observability/metrics/outbox-metrics';
export { RelayActivityTracker } from './core/observe/relay-activity';
export { combineObservers } from './core/observe/relay-observer';
export type { OutboxTracingOptions } from './observability/tracing/tracing.options';
export { continueOutboxTrace, type ContinueTraceOptions } from './observability/tracing/continue-outbox-trace';

// Operator console (page, REST admin) and its core
export { OutboxConsoleModule } from './console/outbox-console.module';
export type { OutboxConsoleOptions } from './console/outbox-console.options';
export { OutboxConsoleService, type ConsoleSummary } from './console/outbox-console.service';
export { OutboxConsole, type MessagePage, type BulkOutcome } from './core/console/outbox-console';
export type { OutboxConsoleStore, MessageFilter, MessageSummary, MessageDetail, ThroughputPoint, PausedDestination } from './core/console/outbox-console.port';
export { ConsoleError } from './core/console/console.error';
export { createSqlOutboxConsoleStore } from './typeorm/outbox-sql.factory';

// Aggregates and events
export { PublishesEvents, type PublishesEventsOptions } from './decorators/publishes-events.decorator';
export { OutboxEvent, type OutboxEventOptions } from './decorators/outbox-event.decorator';
export { OutboxAggregateRoot, WithOutboxEvents, recordEvent, getRecordedEvents, type RecordedEvent } from './core/recorded-events';

// Messages, ports and settings
export type { ClaimedMessage, OutboxEnvelope, OutgoingMessage, MessageMetadata, OutboxMessageStatus, DeliveryOptions, RecordEventOptions } from './core/outbox-message';
export { ENVELOPE_HEADERS } from './core/envelope';
export type { OutboxTransport, Acknowledgement } from './core/outbox-transport.port';
export type { OutboxStore, ClaimRequest, FailedDelivery, OutboxWriterPort } from './core/outbox-store.port';
// What a store receives from the writer and hands to the relay: named for those who write a store.
export type { NewOutboxMessage } from './core/outbox-message';
export { OUTBOX_LIMITS, OUTBOX_DEFAULTS, DEFAULT_TRANSPORT, type OutboxSettings, type OutboxRoute, type CleanupOptions, type EventDraft } from './core/outbox-options';
export { OutboxConfigurationError, OutboxWriteError, OutboxAdminError, OutboxNonRetryableError } from './core/outbox.errors';
export type { RetryIf } from './core/failure-classification';
export { InMemoryOutboxStore } from './core/in-memory-outbox.store';
export { OutboxRelay, type BatchOutcome } from './core/outbox-relay';
export { RetryPolicy, type BackoffOptions } from './core/retry-policy';

// TypeORM pieces
export { outboxMessageEntity, DEFAULT_OUTBOX_TABLE, type OutboxMessageRow } from './typeorm/outbox-message.entity';
export { CreateOutboxTable, createOutboxTableMigration } from './typeorm/create-outbox-table.migration';
export { AddOutboxPausedTable, AddOutboxPauseReason, createOutboxPausedTableMigration, createOutboxPauseReasonMigration } from './typeorm/console/add-paused-table.migration';
export type { OutboxMessageInput } from './typeorm/typeorm-outbox.writer';
export { createSqlOutboxStore } from './typeorm/outbox-sql.factory';
export { createSqlOutboxMaintenanceStore, createSqlOutboxStatsSource } from './typeorm/outbox-sql.factory';
export { OutboxCleaner, type CleanupSettings, type CleanupOutcome } from './core/outbox-cleaner';

// Other data layers: OutboxPublisher.add(tx, …) inside a Prisma, Drizzle, Kysely, MikroORM or pg transaction
export type { DataLayerTransaction } from './adapters/data-layer-transaction';
export type { SqlTransaction, SqlDialectName } from './sql/sql-transaction.port';
export { DataLayerInbox } from './adapters/data-layer-inbox';

// WAL delivery mode (PostgreSQL)
export { walNames, type OutboxDelivery, type WalDeliveryOptions } from './core/stream/wal-options';
export { dropWalSlot, walSlotState, type WalQuery, type WalNames, type WalSlotLag } from './postgres-wal/wal-slot.setup';
export { OutboxWalHost } from './nest/outbox-wal.host';
export { OutboxWalHealthIndicator } from './observability/wal/outbox-wal.health-indicator';

// Transports
export { ClientProxyTransport } from './transports/client-proxy.transport';
export { JetStreamTransport, type JetStreamTransportOptions } from './transports/jetstream.transport';

// Consumer side: the inbox
export { OutboxInboxModule } from './nest/inbox/outbox-inbox.module';
export { OutboxInbox } from './nest/inbox/outbox-inbox';
export { Idempotent } from './nest/inbox/idempotent.decorator';
export type { OutboxInboxModuleOptions, OutboxInboxModuleExtras } from './nest/inbox/outbox-inbox.options';
export type { InboxOutcome, InboxSettings, InboxStore } from './core/inbox/inbox.port';
export { INBOX_LIMITS } from './core/inbox/inbox-settings';
export { TypeOrmInbox } from './typeorm/inbox/typeorm-inbox';
export { TypeOrmInboxStore } from './typeorm/inbox/typeorm-inbox.store';
export { CreateInboxTable, createInboxTableMigration } from './typeorm/inbox/create-inbox-table.migration';
export { DEFAULT_INBOX_TABLE } from './typeorm/inbox/inbox-sql.dialect';
// Consumer side: poison messages
export type { PoisonCount, PoisonRecord, PoisonSettings, PoisonState, PoisonStore, PoisonListFilter } from './core/poison/poison.port';
export type { PoisonSummary, PoisonConsumerSummary } from './core/poison/poison-summary';
export { POISON_DEFAULTS } from './core/poison/poison.port';
export { PoisonPolicy } from './core/poison/poison-policy';
export { isOutboxEnvelope } from './core/poison/poison-decoding';
export { PoisonReplays, type ReplayHandler } from './nest/inbox/poison-replays';
export { TypeOrmPoisonStore } from './typeorm/poison/typeorm-poison.store';
export { CreateInboxPoisonTable, createInboxPoisonTableMigration } from './typeorm/poison/create-poison-table.migration';
export { DEFAULT_POISON_TABLE } from './typeorm/poison/poison-sql.dialect';

// In-process handlers
export { OnOutboxEvent, type OnOutboxEventOptions } from './nest/in-process/on-outbox-event.decorator';
export { InProcessTransport, IN_PROCESS_TRANSPORT, type InProcessHandler } from './transports/in-process.transport';

// Typed payloads
export { toOutboxEvent, OutboxEventValidationError } from './core/typed/to-outbox-event';
export { OutboxEventPipe } from './nest/typed/outbox-event.pipe';
export type { OutboxUpcaster } from './decorators/outbox-event.decorator';
export { MESSAGE_LIMITS, ERROR_LIMITS } from './core/message-limits';
export { OUTBOX_OPTION_KEYS } from './core/option-keys';

// Testing kit: OutboxTestingModule in place of OutboxModule, a recording transport, assertions
export { OutboxTestingModule } from './testing/outbox-testing.module';
export { InMemoryOutbox } from './testing/in-memory-outbox';
export { RecordingOutboxTransport } from './testing/recording-outbox.transport';
export { expectPublished, expectNotPublished, findPublished, type PublishedMatch } from './testing/outbox-assertions';
export { describeOutboxStoreContract, type OutboxStoreContractSubject, type StoreUnderTest } from './testing/contracts/outbox-store-contract.suite';
export {
  describeOutboxTransportContract,
  type OutboxTransportContractSubject,
  type OpenTransport,
  type BrokerDestination,
  type ReceivedMessage,
} from './testing/contracts/outbox-transport-contract.suite';
export type { ContractRunner, ContractTest } from './testing/contracts/contract-runner';
