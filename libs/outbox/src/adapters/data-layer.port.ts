import type { SqlTransaction } from '../core/sql-transaction.port';

/**
 * One data layer as the writer sees it: how its transaction objects are recognized (by shape: an app
 * may load its own copy of each package, so no `instanceof`), and how one becomes the `SqlTransaction`
 * the writer writes through. A new data layer is one folder under adapters/ and one entry in
 * `DATA_LAYERS` (data-layer-transaction.ts).
 */
export interface DataLayerAdapter {
  /** How the refusal of an unknown object names this layer, and where it stands in that list (not in the order of the tests). */
  readonly listed?: { readonly as: string; readonly at: number };
  matches(value: object): boolean;
  /** The layer's `SqlTransaction`, or a refusal naming what to pass instead (outside a transaction). */
  toSql(value: object, options: DataLayerOptions): SqlTransaction;
}

/** What a module tells every adapter, the same for each transaction it resolves. */
export interface DataLayerOptions {
  /**
   * PostgreSQL: run the outbox's statements as named prepared statements, where the layer can
   * (TypeORM), parsed and planned once per connection. The module's `preparedStatements` option.
   */
  readonly preparedStatements: boolean;
  /**
   * PostgreSQL through node-postgres: send the outbox's statement with the transaction's COMMIT
   * (adapters/pg/commit-carrier.ts). The module's `writeWithCommit` option. Default: true.
   */
  readonly writeWithCommit?: boolean;
  /** The transactions the module follows from start to end, where it can (TypeORM's subscriber feeds them). */
  readonly followed?: FollowedTransactions;
}

/**
 * A record per open transaction, keyed by the layer's own object for it (TypeORM's query runner),
 * kept by whoever sees the transaction start, commit and roll back: with it a transaction notifies
 * the relays once rather than with every INSERT, and its commit can wake this instance's relay.
 */
export interface FollowedTransactions {
  /** The transaction wrote outbox rows: its commit is worth a wake-up. */
  wrote(owner: object): void;
  /** Whether the next INSERT should carry the notification: none sent yet, or the savepoint that sent it rolled back. */
  needsNotification(owner: object): boolean;
  notified(owner: object): void;
}

/** Options for a transaction resolved outside any module: plain statements, no transaction followed. */
export const PLAIN_DATA_LAYER_OPTIONS: DataLayerOptions = { preparedStatements: false };
