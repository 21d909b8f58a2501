import type { BackoffOptions } from './retry-policy';
import type { MessageMetadata } from './outbox-message';
import type { HealthThresholds, StatsOptions } from './observe/observability.options';
import type { OutboxPartitioning, ResolvedPartitioning } from './partitioning/outbox-partitioning';
import type { EnvelopeOptions, ResolvedEnvelopeOptions } from './cloudevents/envelope-options';
import type { ClaimCheckOptions, ResolvedClaimCheck } from './claim-check/claim-check-options';
import type { OutboxDelivery, WalDeliveryOptions } from './stream/wal-options';

// The settings of the outbox's core: what OutboxModule.forRoot takes beside its Nest-only options
// (see nest/outbox-module.options.ts), and what they are once resolved (core/outbox-options.ts).

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
  /**
   * PostgreSQL through node-postgres (TypeORM's `postgres` driver, a `pg` client): the outbox's
   * statement goes out with the transaction's COMMIT, in one network write, so that a save costs no
   * round trip of its own; when it fails, the commit fails with its error and nothing commits.
   * `false`: it runs when the save writes it, and its failure fails the save. Ignored elsewhere.
   * Default `true`.
   */
  writeWithCommit?: boolean;
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
  /**
   * Largest serialized payload a message carries, in bytes: the destination's limit. A larger payload
   * fails the save (naming this option), unless `claimCheck` stores it out of the message. The default
   * `1048576` (1 MiB) fits Kafka's default `message.max.bytes` (1,048,588) with the envelope.
   */
  maxPayloadBytes?: number;
  /**
   * The claim check: payloads over `thresholdBytes` (default 256 KiB) are stored out of the message, in
   * the `<outbox table>_payloads` table, written in the caller's transaction; the message carries a
   * reference (header `outbox-claim-check`), which the inbox and `@Idempotent()` handlers resolve.
   * `true` takes the defaults. See docs/claim-check.md. Default: off.
   */
  claimCheck?: ClaimCheckOptions | boolean;
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
   * relay. `'wal'` (PostgreSQL with `wal_level = logical` only): the relay streams what the saving
   * transaction wrote (a row, or a logical decoding message: `wal.write`) from a replication slot, in
   * commit order (see docs/wal-mode.md). Default `'table'`.
   */
  delivery?: OutboxDelivery;
  /** What the WAL delivery mode writes (`write`), its slot and publication (named after the table by default), its limits. */
  wal?: WalDeliveryOptions;
  /**
   * How published messages look on the wire, module-wide (`format`) and per destination
   * (`destinations`): the outbox envelope, or a CloudEvent 1.0 in binary or structured mode (needs
   * the optional package `cloudevents` and a `source`). See docs/cloudevents.md. Default `{ format: 'outbox' }`.
   */
  envelope?: EnvelopeOptions;
}

export type ResolvedOutboxSettings = Required<Omit<OutboxSettings, 'defaultTopic' | 'resolveTopic' | 'enrich' | 'backoff' | 'cleanup' | 'stats' | 'health' | 'retryIf' | 'wal' | 'envelope' | 'partitioning' | 'claimCheck'>> &
  Pick<OutboxSettings, 'defaultTopic' | 'resolveTopic' | 'enrich' | 'retryIf'> & {
    backoff: BackoffOptions;
    cleanup: Required<CleanupOptions>;
    wal: WalDeliveryOptions;
    envelope: ResolvedEnvelopeOptions;
    partitioning?: ResolvedPartitioning;
    claimCheck?: ResolvedClaimCheck;
  };
