import type { OutboxMessageStatus } from '../outbox-message';

/** Which rows an operator means. Every field narrows; an empty filter means every row. */
export interface MessageFilter {
  status?: OutboxMessageStatus;
  type?: string;
  aggregateType?: string;
  aggregateId?: string;
  destination?: string;
  /** The message id (the envelope's `id`). */
  id?: string;
  /** Rows inserted at or after this time. */
  from?: Date;
  /** Rows inserted before this time. */
  to?: Date;
  /**
   * Only rows in backoff: pending, failed at least once, and waiting for a next attempt later than
   * now (no relay holding them). Delayed deliveries that never failed are not among them.
   */
  retrying?: boolean;
}

/** One row of the message table, without payload or headers. Times are ISO-8601 UTC. */
export interface MessageSummary {
  position: string;
  id: string;
  type: string;
  aggregateType: string;
  aggregateId: string;
  transport: string;
  destination: string;
  status: OutboxMessageStatus;
  attempts: number;
  lastError: string | null;
  occurredAt: string;
  createdAt: string;
  publishedAt: string | null;
  deadAt: string | null;
}

/** One message in full: the envelope as a consumer would receive it, and every failed attempt. */
export interface MessageDetail extends MessageSummary {
  version: number;
  correlationId: string | null;
  causationId: string | null;
  tenantId: string | null;
  headers: Record<string, string>;
  payload: unknown;
  errors: Array<{ at: string; error: string }>;
  nextAttemptAt: string | null;
  leaseOwner: string | null;
  leaseExpiresAt: string | null;
}

/** Rows published in one minute (UTC, `minute` is its start), for the throughput chart. */
export interface ThroughputPoint {
  minute: string;
  published: number;
}

export interface PausedDestination {
  destination: string;
  pausedAt: string;
  /** Why, as given by the operator who paused it; `null` when none was given. */
  reason: string | null;
}

/**
 * What the console needs of the store. Bulk changes take dead rows in bounded batches
 * (`position > after`, oldest first, at most `limit`): no statement holds locks on an unbounded set.
 */
export interface OutboxConsoleStore {
  /** Newest first; `before` is the position of the last row of the previous page. */
  list(filter: MessageFilter, before: string | null, limit: number): Promise<MessageSummary[]>;
  get(id: string): Promise<MessageDetail | undefined>;
  count(filter: MessageFilter): Promise<number>;
  /** Dead rows matching `filter` after `after` → pending with fresh attempts; returns their positions. */
  requeueBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]>;
  /** Dead rows matching `filter` after `after` → discarded; returns their positions. */
  discardBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]>;
  /** Rows in backoff matching `filter` after `after` → due now, attempts kept; returns their positions. */
  retryNowBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]>;
  /** Whether any row, in any status, has this destination. */
  destinationUsed(destination: string): Promise<boolean>;
  /** Published rows per minute over the last `minutes` minutes (minutes without any are left out). */
  throughput(minutes: number): Promise<ThroughputPoint[]>;
  paused(): Promise<PausedDestination[]>;
  /** `true` when it was not paused yet (an existing pause keeps its reason). */
  pause(destination: string, reason: string | null): Promise<boolean>;
  /** `true` when it was paused. */
  resume(destination: string): Promise<boolean>;
}
