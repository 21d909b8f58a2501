import type { ClaimedMessage, NewOutboxMessage } from './outbox-message';

export interface ClaimRequest {
  /** Identifies the relay, for `release` and for people reading the table. */
  owner: string;
  /** New for every claim. Only a holder of the current token may settle a row (fencing). */
  token: string;
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
 *   earlier row of the same aggregate and destination is not yet published, unless that earlier
 *   row is leased by the same claim (the ordering rule). A claim may thus carry a run of
 *   consecutive rows of one aggregate and destination; its cost should grow with `limit`, not
 *   with an aggregate's backlog.
 * - `markPublished`, `markFailed` and `giveBack` only touch pending rows still holding `token`: a
 *   relay that stalled past its lease cannot overwrite what the relay that took over did, even if
 *   both were configured with the same relay id. `release` hands back the pending rows `owner` holds.
 */
export interface OutboxStore {
  claim(request: ClaimRequest): Promise<ClaimedMessage[]>;
  markPublished(token: string, positions: string[]): Promise<number>;
  markFailed(token: string, failures: FailedDelivery[]): Promise<number>;
  /**
   * Hands back rows of a claim that were not attempted (they followed a failed row of their
   * aggregate): lease cleared, the claim's attempt not counted, no error recorded.
   */
  giveBack(token: string, positions: string[]): Promise<number>;
  release(owner: string): Promise<number>;
  /**
   * Optional, for a store that can do both at once (PostgreSQL): marks `published` rows of claim
   * `token` published as `markPublished` does and, in the same atomic step, claims as `claim(next)`
   * would once they are published. A busy aggregate's next run is then leased without a round trip
   * of its own after the settle; a row not marked (its lease taken over) still holds its key back.
   */
  settleAndClaim?(token: string, published: string[], next: ClaimRequest): Promise<SettledAndClaimed>;
}

/** What `settleAndClaim` did: rows marked published, and the next claim's rows. */
export interface SettledAndClaimed {
  settled: number;
  claimed: ClaimedMessage[];
}

/** Writes rows inside a transaction that the caller owns. `T` is the ORM's transaction handle. */
export interface OutboxWriterPort<T> {
  write(transaction: T, messages: NewOutboxMessage[]): Promise<void>;
}
