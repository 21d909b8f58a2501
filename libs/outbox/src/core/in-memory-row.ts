import type { NewOutboxMessage, OutboxMessageStatus } from './outbox-message';

/** A row of the in-memory store (InMemoryOutboxStore), as its stats count them (countDestinations). */
export interface InMemoryRow {
  position: number;
  message: NewOutboxMessage;
  status: OutboxMessageStatus;
  attempts: number;
  lastError?: string;
  nextAttemptAt?: number;
  leaseOwner?: string;
  leaseToken?: string;
  leaseExpiresAt?: number;
  createdAt: number;
  publishedAt?: number;
}
