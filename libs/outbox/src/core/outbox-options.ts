import { OutboxConfigurationError } from './outbox.errors';
import { failOption as fail, isPlainObject, validateSettings as validate } from './outbox-options.checks';
import { resolvePartitioning } from './partitioning/outbox-partitioning';
import { partitioningNeedsTableDelivery } from './partitioning/partitioning.messages';
import { resolveEnvelopeOptions } from './cloudevents/envelope-options';
import { resolveClaimCheck } from './claim-check/claim-check-options';
import { OUTBOX_DELIVERY_DEFAULT, validateDelivery } from './stream/wal-options';
import type { OutboxSettings, ResolvedOutboxSettings } from './outbox-settings';

export type { CleanupOptions, EventDraft, OutboxRoute, OutboxSettings, ResolvedOutboxSettings } from './outbox-settings';

export const OUTBOX_DEFAULTS = {
  relay: true,
  notifications: true,
  preparedStatements: true,
  writeWithCommit: true,
  pollIntervalMs: 5_000,
  batchSize: 100,
  maxBatchesInFlight: 2,
  leaseMs: 30_000,
  publishTimeoutMs: 10_000,
  maxAttempts: 10,
  backoff: { initialMs: 1_000, maxMs: 300_000, jitter: 0.2 },
  shutdownTimeoutMs: 10_000,
  maxPayloadBytes: 1_048_576,
  requireAcknowledgement: false,
  deadLetterPolicy: 'hold',
  cleanup: { publishedRetentionMs: 604_800_000, deleteOnPublish: false, deadRetentionMs: null, intervalMs: 60_000, batchSize: 500 },
} as const;

/** The name of the transport given as `transport`; routes name the others. */
export const DEFAULT_TRANSPORT = 'default';

/** Applies defaults once and rejects values that cannot work, naming the option. */
export function resolveOutboxSettings(options: OutboxSettings, defaultRelayId: () => string): ResolvedOutboxSettings {
  // Spread below: a string or an array would silently turn into the defaults.
  if (options.backoff !== undefined && !isPlainObject(options.backoff)) fail('backoff', 'an object { initialMs?, maxMs?, jitter? }', options.backoff);
  if (options.cleanup !== undefined && !isPlainObject(options.cleanup)) {
    fail('cleanup', 'an object { publishedRetentionMs?, deleteOnPublish?, deadRetentionMs?, intervalMs?, batchSize? }', options.cleanup);
  }
  const resolved: ResolvedOutboxSettings = {
    relay: options.relay ?? OUTBOX_DEFAULTS.relay,
    notifications: options.notifications ?? OUTBOX_DEFAULTS.notifications,
    preparedStatements: options.preparedStatements ?? OUTBOX_DEFAULTS.preparedStatements,
    writeWithCommit: options.writeWithCommit ?? OUTBOX_DEFAULTS.writeWithCommit,
    pollIntervalMs: options.pollIntervalMs ?? OUTBOX_DEFAULTS.pollIntervalMs,
    batchSize: options.batchSize ?? OUTBOX_DEFAULTS.batchSize,
    maxBatchesInFlight: options.maxBatchesInFlight ?? OUTBOX_DEFAULTS.maxBatchesInFlight,
    leaseMs: options.leaseMs ?? OUTBOX_DEFAULTS.leaseMs,
    publishTimeoutMs: options.publishTimeoutMs ?? OUTBOX_DEFAULTS.publishTimeoutMs,
    maxAttempts: options.maxAttempts ?? OUTBOX_DEFAULTS.maxAttempts,
    backoff: { ...OUTBOX_DEFAULTS.backoff, ...options.backoff },
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? OUTBOX_DEFAULTS.shutdownTimeoutMs,
    routes: options.routes ?? [],
    maxPayloadBytes: options.maxPayloadBytes ?? OUTBOX_DEFAULTS.maxPayloadBytes,
    requireAcknowledgement: options.requireAcknowledgement ?? OUTBOX_DEFAULTS.requireAcknowledgement,
    deadLetterPolicy: options.deadLetterPolicy ?? OUTBOX_DEFAULTS.deadLetterPolicy,
    cleanup: { ...OUTBOX_DEFAULTS.cleanup, ...options.cleanup },
    relayId: options.relayId ?? defaultRelayId(),
    defaultTopic: options.defaultTopic,
    resolveTopic: options.resolveTopic,
    enrich: options.enrich,
    retryIf: options.retryIf,
    delivery: options.delivery ?? OUTBOX_DELIVERY_DEFAULT,
    wal: { ...options.wal },
    envelope: resolveEnvelopeOptions(options.envelope),
    ...(options.partitioning === undefined ? {} : { partitioning: resolvePartitioning(options.partitioning) }),
  };
  validate(resolved);
  const claimCheck = resolveClaimCheck(options.claimCheck, resolved.maxPayloadBytes);
  if (claimCheck !== undefined) resolved.claimCheck = claimCheck;
  validateDelivery(resolved.delivery, options.wal);
  if (resolved.partitioning !== undefined && resolved.delivery !== 'table') throw new OutboxConfigurationError(partitioningNeedsTableDelivery());
  return resolved;
}

export { OUTBOX_LIMITS } from './outbox-options.checks';
