// @nest-outbox/outbox/observability: stats, Prometheus metrics (prom-client), health indicators
// (@nestjs/terminus), tracing (@opentelemetry/api) and the relay's observer hooks. Each optional peer
// is loaded only when its feature is configured; the types here name them, the root's do not.
export { OutboxStats } from '../nest/observe/outbox.stats';
export { OutboxObservers } from '../nest/observe/outbox-observers.registry';
export type { StatsOptions, HealthThresholds } from '../core/observe/observability.options';
export type { OutboxStatsSnapshot, OutboxDestinationStats, RelayActivity } from '../core/stats/outbox-stats';
export type { OutboxStatsSource, DestinationCounts } from '../core/stats/outbox-stats.port';
export { OutboxStatsReader } from '../core/stats/outbox-stats.reader';
export { OBSERVABILITY_LIMITS } from '../core/observe/observability.options';
export { combineObservers, type RelayObserver, type SettledBatch, type MessageOutcome, type RoundEnd } from '../core/observe/relay-observer';
export { RelayActivityTracker } from '../core/observe/relay-activity';
export {
  OUTBOX_CHANNELS,
  type OutboxClaimedEvent,
  type OutboxPublishedEvent,
  type OutboxFailedEvent,
  type OutboxLeaseLostEvent,
} from '../core/observe/outbox.channels';

// Health (@nestjs/terminus)
export { OutboxHealthIndicator } from '../nest/observe/outbox.health-indicator';
export { OutboxInboxPoisonHealthIndicator } from '../nest/observe/outbox-inbox-poison.health-indicator';
export { OutboxWalHealthIndicator } from '../nest/observe/outbox-wal.health-indicator';
export { OutboxTenantsHealthIndicator } from '../nest/tenants/outbox-tenants.health-indicator';
export type { StreamLag as WalSlotLag } from '../core/stream/delivery-stream.port';

// Metrics (prom-client)
export { DEFAULT_LATENCY_BUCKETS, resolveMetricsOptions, type OutboxMetricsOptions, type MetricsRegistry } from '../core/observe/metrics/metrics.options';
export { OutboxMetrics, type OutboxMetricsSources } from '../core/observe/metrics/outbox-metrics';

// Tracing (@opentelemetry/api)
export type { OutboxTracingOptions } from '../core/observe/tracing/tracing.options';
export { continueOutboxTrace, type ContinueTraceOptions } from '../core/observe/tracing/continue-outbox-trace';
