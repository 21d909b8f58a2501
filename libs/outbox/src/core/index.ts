// @nest-outbox/outbox/core: plain TypeScript, no Nest and no TypeORM: the ports a store or a
// transport of your own implements, the relay and its policies, an in-memory store, the settings.
export type { OutboxTransport, Acknowledgement } from './outbox-transport.port';
export type { OutboxStore, ClaimRequest, FailedDelivery, OutboxWriterPort } from './outbox-store.port';
export type {
  ClaimedMessage,
  NewOutboxMessage,
  OutgoingMessage,
  OutboxEnvelope,
  MessageMetadata,
  OutboxMessageStatus,
  DeliveryOptions,
} from './outbox-message';
export { ENVELOPE_HEADERS } from './envelope';
export { REPLAY_HEADERS, type ReplayFilter } from './replay/replay.port';
export type { ReplayRequest, ReplayOutcome } from './replay/outbox-replay';
export { bodyOf } from './outbox-message';
// CloudEvents: the `envelope` option's types, the attribute mapping, and reading a received CloudEvent (no SDK needed).
export { ENVELOPE_FORMATS, type EnvelopeFormat, type EnvelopeOptions } from './cloudevents/envelope-options';
export { CLOUD_EVENT_EXTENSIONS, cloudEventAttributes, type CloudEventAttributes } from './cloudevents/cloud-event-attributes';
export { envelopeOfCloudEvent, isStructuredCloudEvent, type ReceivedKafkaMessage } from './cloudevents/received-cloud-event';
export { OutboxRelay, type BatchOutcome } from './outbox-relay';
export { RetryPolicy, type BackoffOptions } from './retry-policy';
export type { RetryIf } from './failure-classification';
// An event's upcaster as a type of its own (the root's @OutboxEvent takes one inline).
export type { OutboxUpcaster } from './event-metadata';
export { InMemoryOutboxStore } from './in-memory-outbox.store';
export { OutboxCleaner, type CleanupSettings, type CleanupOutcome } from './outbox-cleaner';
export { OUTBOX_LIMITS, OUTBOX_DEFAULTS, DEFAULT_TRANSPORT, type OutboxSettings, type OutboxRoute, type CleanupOptions, type EventDraft } from './outbox-options';
export { MESSAGE_LIMITS, ERROR_LIMITS } from './message-limits';
export type { OutboxDelivery, WalDeliveryOptions, WalReaderThread, WalWrite } from './stream/wal-options';
export type { OutboxPartitioning, PartitionInterval } from './partitioning/outbox-partitioning';
export type { OutboxPartitionStore, OutboxTableKind, PartitionsMade, PartitionsDropped } from './partitioning/outbox-partitions.port';
export type { InboxOutcome, InboxSettings, InboxStore } from './inbox/inbox.port';
export { INBOX_LIMITS } from './inbox/inbox-settings';
export {
  POISON_DEFAULTS,
  type PoisonSettings,
  type PoisonStore,
  type PoisonRecord,
  type PoisonState,
  type PoisonListFilter,
  type PoisonCount,
} from './poison/poison.port';
export type { DeadMessage } from './outbox-maintenance.port';
// A data layer of your own hands OutboxPublisher.add a SqlTransaction. A type only: core loads nothing of sql/.
export type { SqlTransaction, SqlDialectName, SqlTransactionNotifications } from './sql-transaction.port';
// A connection of your own (OutboxModule's `connection: { pool }` takes a driver's pool; this is the port under it).
export type { SqlConnection, SqlRunner, SqlResult } from './sql-connection.port';
// The claim check (option `claimCheck`): the reference a message carries, and reading a payload back outside the inbox.
export { CLAIM_CHECK_HEADER, CLAIM_CHECK_FIELD, referenceOf, type ClaimCheckReference } from './claim-check/claim-check-reference';
export { ClaimedPayloadReader, ClaimCheckError } from './claim-check/claimed-payload.reader';
export type { PayloadReader, PayloadStore, PayloadCollector } from './claim-check/payload-store.port';
export { CLAIM_CHECK_DEFAULTS, type ClaimCheckOptions, type S3ClientLike } from './claim-check/claim-check-options';
