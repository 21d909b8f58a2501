import type { ClaimedMessage, NewOutboxMessage } from './outbox-message';

export interface ClaimRequest {
  /** Identifies the relay; only the lease owner may change a claimed row. */
  owner: string;
  limit: number;
  leaseMs: number;
}

export interface FailedDelivery {
  position: string;
  error: string;
  /** Delay before the next attempt, or `null` when the row is dead. */
  retryInMs: number | null;
}

/**
 * Where rows live. Implementations must keep these promises:
 * - `claim` leases at most `limit` pending rows whose retry time has come and whose lease is
 *   free or expired, computing expiry with the database's clock, and never a row while an
 *   earlier row of the same aggregate is not yet published (this is the ordering rule).
 * - `markPublished`, `markFailed` and `release` only touch rows still leased by `owner`, so a
 *   relay whose lease expired cannot overwrite the work of the relay that took over.
 */
export interface OutboxStore {
  claim(request: ClaimRequest): Promise<ClaimedMessage[]>;
  markPublished(owner: string, positions: string[]): Promise<number>;
  markFailed(owner: string, failures: FailedDelivery[]): Promise<number>;
  release(owner: string): Promise<number>;
}

/** Writes rows inside a transaction that the caller owns. `T` is the ORM's transaction handle. */
export interface OutboxWriterPort<T> {
  write(transaction: T, messages: NewOutboxMessage[]): Promise<void>;
}
