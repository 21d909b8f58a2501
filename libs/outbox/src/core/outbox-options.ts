import { OutboxConfigurationError } from './outbox.errors';
import { conflictingOptions, invalidOption } from './outbox.messages';
import type { BackoffOptions } from './retry-policy';
import type { MessageMetadata } from './outbox-message';
import type { HealthThresholds, StatsOptions } from './observe/observability.options';
import { CONTROL_CHARACTER, DESTINATION_RULE, isDestinationName } from './names';
import { resolvePartitioning, type OutboxPartitioning, type ResolvedPartitioning } from './partitioning/outbox-partitioning';
import { partitioningNeedsTableDelivery } from './partitioning/partitioning.messages';
import { resolveEnvelopeOptions, type EnvelopeOptions, type ResolvedEnvelopeOptions } from './cloudevents/envelope-options';
import { OUTBOX_DELIVERY_DEFAULT, validateDelivery, type OutboxDelivery, type WalDeliveryOptions } from './stream/wal-options';

/** What `resolveTopic` and `enrich` are told about an event being written. */
export interface EventDraft {
  type: string;
  version: number;
  aggregateType: string;
  aggregateId: string;
  payload: unknown;
}

/**
 * Sends matching events to one more destination, as rows of their own: each destination has its
 * own state and retries, so one being down never delays another.
 */
export interface OutboxRoute {
  /** Event types this route applies to. With neither `events` nor `aggregates`, it applies to all. */
  events?: string[];
  /** Aggregate types this route applies to. */
  aggregates?: string[];
  /** Name of a transport in `transports`. */
  transport: string;
  /** Topic, queue or subject on that transport. */
  topic: string;
}

export interface CleanupOptions {
  /** Published rows are deleted this long after publishing. Default `604800000` (7 days). */
  publishedRetentionMs?: number;
  /** Delete rows as soon as they are published (no history). Default `false`. */
  deleteOnPublish?: boolean;
  /** Dead and discarded rows are deleted this long after they died; `null` keeps them. Default `null`. */
  deadRetentionMs?: number | null;
  /** Milliseconds between cleanup runs. Default `60000`. */
  intervalMs?: number;
  /** Rows deleted per statement. Default `500`. */
  batchSize?: number;
}

/** Relay and writer settings that do not depend on Nest or TypeORM. */
export interface OutboxSettings {
  /** Whether this instance runs the relay. A web-only instance may write rows and leave relaying to others. Default `true`. */
  relay?: boolean;
  /**
   * Milliseconds between polls of the outbox table: the safety net behind the after-commit wake-up
   * and PostgreSQL notifications, and what finds retries that come due. On SQLite or MariaDB with
   * writers in other processes than the relay, lower it: polling is how those rows are found.
   * Default `5000`.
   */
  pollIntervalMs?: number;
  /**
   * PostgreSQL: writers send one NOTIFY per transaction (with its first outbox insert) and every instance's relay LISTENs,
   * so a commit anywhere wakes all relays at once. Turn off behind a transaction-pooling proxy
   * (PgBouncer in transaction mode), where LISTEN does not work. Ignored elsewhere. Default `true`.
   */
  notifications?: boolean;
  /**
   * PostgreSQL: the outbox INSERT runs as a named prepared statement, parsed and planned once per
   * connection instead of on every save. Turn off behind a pooler that cannot keep prepared
   * statements across transactions (PgBouncer in transaction mode before 1.21, or without
   * `max_prepared_statements`). Ignored elsewhere. Default `true`.
   */
  preparedStatements?: boolean;
  /** Rows claimed and published per round. Default `100`. */
  batchSize?: number;
  /**
   * Claimed batches on their way at once: the next claim runs while earlier batches publish and
   * settle, which keeps the broker busy during the claim and the settle. Rows of one aggregate are
   * never in two batches in flight, so order is kept. `1` claims only after the previous batch is
   * settled. Memory holds at most this many batches. Default `2`.
   */
  maxBatchesInFlight?: number;
  /** Milliseconds a claimed row stays reserved for this relay; a crashed relay's rows are reclaimed after it. Default `30000`. */
  leaseMs?: number;
  /** Milliseconds one publish may take before it counts as failed. Must be shorter than `leaseMs`. Default `10000`. */
  publishTimeoutMs?: number;
  /** Attempts before a row becomes dead. Default `10`. */
  maxAttempts?: number;
  /** Backoff between attempts. Default `{ initialMs: 1000, maxMs: 300000, jitter: 0.2 }`. */
  backoff?: Partial<BackoffOptions>;
  /** Destination when neither the event, its aggregate nor `resolveTopic` names one. Default: none (the save fails). */
  defaultTopic?: string;
  /** Picks the destination of an event; return `undefined` to fall back to the decorators and `defaultTopic`. */
  resolveTopic?: (draft: EventDraft) => string | undefined;
  /**
   * What a dead row does to later rows of its aggregate and destination: `hold` them (order is
   * never broken; they resume once it is requeued or discarded) or `skip` it. Default `'hold'`.
   */
  deadLetterPolicy?: 'hold' | 'skip';
  /** Deleting settled rows. Runs on instances that relay. */
  cleanup?: CleanupOptions;
  /**
   * PostgreSQL, `delivery: 'table'`: the outbox table is partitioned by `created_at`, one partition
   * per day or hour. Cleanup runs make partitions ahead and drop old ones whose rows are all published
   * instead of deleting rows. The table must be created so: give the migration the same value (see
   * docs/operating.md, "A partitioned outbox table"). Default: none, a plain table.
   */
  partitioning?: OutboxPartitioning;
  /** Extra destinations for some events, each on a named transport. Default: none. */
  routes?: OutboxRoute[];
  /** Largest serialized payload accepted at save time, in bytes. Default `1048576` (1 MiB). */
  maxPayloadBytes?: number;
  /** Fail at startup when a transport cannot confirm that the broker has a message (Redis pub/sub, core NATS, TCP). Default `false`: log a warning. */
  requireAcknowledgement?: boolean;
  /** Adds correlation/causation/tenant ids and extra headers (trace context) to every event at write time. */
  enrich?: (draft: EventDraft) => MessageMetadata | undefined;
  /** Milliseconds shutdown waits for the in-flight batch before releasing leases anyway. Default `10000`. */
  shutdownTimeoutMs?: number;
  /** Lease owner id of this relay. Default: host name, process id and a random suffix. */
  relayId?: string;
  /** How often `OutboxStats` (and metrics and health, which read it) query the table. */
  stats?: StatsOptions;
  /** Thresholds of `OutboxHealthIndicator`. */
  health?: HealthThresholds;
  /**
   * Decides whether a failed publish (or in-process handler) is tried again: return `false` to send
   * the row to dead at once, keeping the error. A `OutboxNonRetryableError` is never retried,
   * whatever this says; an exception thrown here counts as "retry". Default: retry every error.
   */
  retryIf?: (error: unknown) => boolean;
  /**
   * How events reach the broker. `'table'`: rows of the outbox table, claimed and published by the
   * relay. `'wal'` (PostgreSQL with `wal_level = logical` only): the saving transaction writes a
   * logical decoding message and the relay streams them from a replication slot, in commit order
   * (see the README's "WAL delivery mode"). Default `'table'`.
   */
  delivery?: OutboxDelivery;
  /** Slot and publication of the WAL delivery mode. Default: named after the table. */
  wal?: WalDeliveryOptions;
  /**
   * How published messages look on the wire, module-wide (`format`) and per destination
   * (`destinations`): the outbox envelope, or a CloudEvent 1.0 in binary or structured mode (needs
   * the optional package `cloudevents` and a `source`). See docs/cloudevents.md. Default `{ format: 'outbox' }`.
   */
  envelope?: EnvelopeOptions;
}

export type ResolvedOutboxSettings = Required<Omit<OutboxSettings, 'defaultTopic' | 'resolveTopic' | 'enrich' | 'backoff' | 'cleanup' | 'stats' | 'health' | 'retryIf' | 'wal' | 'envelope' | 'partitioning'>> &
  Pick<OutboxSettings, 'defaultTopic' | 'resolveTopic' | 'enrich' | 'retryIf'> & {
    backoff: BackoffOptions;
    cleanup: Required<CleanupOptions>;
    wal: WalDeliveryOptions;
    envelope: ResolvedEnvelopeOptions;
    partitioning?: ResolvedPartitioning;
  };

export const OUTBOX_DEFAULTS = {
  relay: true,
  notifications: true,
  preparedStatements: true,
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
  validateDelivery(resolved.delivery, options.wal);
  if (resolved.partitioning !== undefined && resolved.delivery !== 'table') throw new OutboxConfigurationError(partitioningNeedsTableDelivery());
  return resolved;
}

function validate(settings: ResolvedOutboxSettings): void {
  if (typeof settings.relay !== 'boolean') fail('relay', 'true or false', settings.relay);
  if (typeof settings.notifications !== 'boolean') fail('notifications', 'true or false', settings.notifications);
  if (typeof settings.preparedStatements !== 'boolean') fail('preparedStatements', 'true or false', settings.preparedStatements);
  bounded('pollIntervalMs', settings.pollIntervalMs, 1, LIMITS.pollIntervalMs);
  bounded('batchSize', settings.batchSize, 1, LIMITS.batchSize);
  bounded('maxBatchesInFlight', settings.maxBatchesInFlight, 1, LIMITS.maxBatchesInFlight);
  bounded('leaseMs', settings.leaseMs, 1, LIMITS.leaseMs);
  bounded('publishTimeoutMs', settings.publishTimeoutMs, 1, LIMITS.publishTimeoutMs);
  bounded('maxAttempts', settings.maxAttempts, 1, LIMITS.maxAttempts);
  bounded('backoff.initialMs', settings.backoff.initialMs, 1, LIMITS.backoffMs);
  bounded('backoff.maxMs', settings.backoff.maxMs, 1, LIMITS.backoffMs);
  bounded('shutdownTimeoutMs', settings.shutdownTimeoutMs, 0, LIMITS.shutdownTimeoutMs);
  bounded('maxPayloadBytes', settings.maxPayloadBytes, 1, LIMITS.maxPayloadBytes);
  if (typeof settings.requireAcknowledgement !== 'boolean') fail('requireAcknowledgement', 'true or false', settings.requireAcknowledgement);
  validateRoutes(settings.routes);
  if (settings.deadLetterPolicy !== 'hold' && settings.deadLetterPolicy !== 'skip') fail('deadLetterPolicy', `'hold' or 'skip'`, settings.deadLetterPolicy);
  validateCleanup(settings);
  const { jitter } = settings.backoff;
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) fail('backoff.jitter', 'a number from 0 to 1', jitter);
  if (settings.backoff.maxMs < settings.backoff.initialMs) {
    throw new OutboxConfigurationError(
      conflictingOptions('backoff.initialMs', 'backoff.maxMs', `the cap ${settings.backoff.maxMs} ms is below the first delay ${settings.backoff.initialMs} ms`),
    );
  }
  if (settings.publishTimeoutMs >= settings.leaseMs) {
    throw new OutboxConfigurationError(
      conflictingOptions(
        'publishTimeoutMs',
        'leaseMs',
        `a publish may take ${settings.publishTimeoutMs} ms but the lease ends after ${settings.leaseMs} ms, so another relay could publish the same row meanwhile; make leaseMs larger`,
      ),
    );
  }
  if (typeof settings.relayId !== 'string' || settings.relayId.length === 0 || settings.relayId.length > 64 || CONTROL_CHARACTER.test(settings.relayId)) {
    fail('relayId', 'a string of 1 to 64 characters without control characters', settings.relayId);
  }
  if (settings.defaultTopic !== undefined && !isDestinationName(settings.defaultTopic)) fail('defaultTopic', DESTINATION_RULE, settings.defaultTopic);
  for (const hook of ['resolveTopic', 'enrich', 'retryIf'] as const) {
    if (settings[hook] !== undefined && typeof settings[hook] !== 'function') fail(hook, 'a function', settings[hook]);
  }
}

function validateCleanup({ cleanup, leaseMs }: ResolvedOutboxSettings): void {
  bounded('cleanup.publishedRetentionMs', cleanup.publishedRetentionMs, 1, LIMITS.retentionMs);
  bounded('cleanup.intervalMs', cleanup.intervalMs, 1, LIMITS.cleanupIntervalMs);
  bounded('cleanup.batchSize', cleanup.batchSize, 1, LIMITS.batchSize);
  if (typeof cleanup.deleteOnPublish !== 'boolean') fail('cleanup.deleteOnPublish', 'true or false', cleanup.deleteOnPublish);
  if (cleanup.deadRetentionMs !== null) bounded('cleanup.deadRetentionMs', cleanup.deadRetentionMs, 1, LIMITS.retentionMs);
  // A row must outlive any lease on it, or a slow relay's late outcome would meet a missing row.
  for (const option of ['publishedRetentionMs', 'deadRetentionMs'] as const) {
    const retention = cleanup[option];
    if (retention !== null && retention < leaseMs && !(option === 'publishedRetentionMs' && cleanup.deleteOnPublish)) {
      throw new OutboxConfigurationError(
        conflictingOptions(`cleanup.${option}`, 'leaseMs', `rows would be deleted after ${retention} ms, sooner than a lease of ${leaseMs} ms ends`),
      );
    }
  }
}

function validateRoutes(routes: unknown): void {
  if (!Array.isArray(routes)) fail('routes', 'an array of { transport, topic, events?, aggregates? }', routes);
  routes.forEach((route: Partial<OutboxRoute>, index) => {
    const at = `routes[${index}]`;
    if (typeof route !== 'object' || route === null) fail(at, 'an object { transport, topic, events?, aggregates? }', route);
    if (typeof route.transport !== 'string' || route.transport === '') fail(`${at}.transport`, 'the name of a transport in "transports"', route.transport);
    if (!isDestinationName(route.topic)) fail(`${at}.topic`, DESTINATION_RULE, route.topic);
    for (const list of ['events', 'aggregates'] as const) {
      const value = route[list];
      if (value !== undefined && (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))) fail(`${at}.${list}`, 'an array of strings', value);
    }
  });
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Upper bounds of the numeric options. Node.js timers cannot wait longer than 2^31 − 1 ms (about
 * 24.8 days): a longer delay fires after 1 ms, so `pollIntervalMs: 3e9` would poll a thousand times
 * a second. Every timer option stays far below that, at what still makes sense for an outbox.
 */
export const OUTBOX_LIMITS = {
  pollIntervalMs: HOUR,
  leaseMs: HOUR,
  publishTimeoutMs: 10 * 60_000,
  shutdownTimeoutMs: 10 * 60_000,
  backoffMs: DAY,
  cleanupIntervalMs: DAY,
  retentionMs: 3_650 * DAY,
  batchSize: 10_000,
  maxBatchesInFlight: 16,
  maxAttempts: 1_000,
  maxPayloadBytes: 64 * 1_048_576,
} as const;
const LIMITS = OUTBOX_LIMITS;

function bounded(option: string, value: unknown, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    fail(option, `an integer from ${min} to ${max}`, value);
  }
}

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
