import type { SqlTransaction } from '../sql-transaction.port';
import type { ClaimCheckReference, ClaimedPayload } from './claim-check-reference';

/**
 * Where payloads too large for their message are kept. `put` runs while the caller's transaction is
 * open: a database store writes in it (so a rollback leaves nothing), another store writes before
 * the commit and leaves its `collectOrphans` to remove what a rolled-back transaction left.
 */
export interface PayloadStore {
  /** The `store` of the references it makes (`database`, `s3`). */
  readonly name: string;
  /** Where its references point (`location`): the payloads table, the bucket. */
  readonly location: string;
  /** Put before the message id in a reference's `key` (an S3 object key prefix); default none. */
  readonly keyPrefix?: string;
  put(transaction: SqlTransaction, payloads: readonly ClaimedPayload[]): Promise<void>;
}

/** What cleanup does with a store: payloads past retention whose rows are settled, and (S3) orphans. */
export interface PayloadCollector {
  /** Deletes up to `limit` payloads stored more than `olderThanMs` ago whose rows are settled; resolves with how many went. */
  deleteExpired(olderThanMs: number, limit: number): Promise<number>;
  /** Deletes objects past the grace period whose transaction never committed; resolves with how many went. */
  collectOrphans?(): Promise<number>;
}

/** What a consumer needs of a store: the payload's JSON, or `undefined` when it is not there. */
export interface PayloadReader {
  /** The `store` of the references it reads. */
  readonly name: string;
  /** The `location` it reads (a table, a bucket); undefined: any. */
  readonly location?: string;
  get(reference: ClaimCheckReference): Promise<string | undefined>;
}
