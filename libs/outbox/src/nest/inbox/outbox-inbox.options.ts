import type { EntityManager } from 'typeorm';
import type { InboxSettings } from '../../core/inbox/inbox.port';
import type { OutboxMetricsOptions } from '../../core/observe/metrics/metrics.options';
import type { OutboxConnectionOptions } from '../../adapters/connection/outbox-connection.options';
import type { PayloadReader } from '../../core/claim-check/payload-store.port';
import type { S3ClientLike } from '../../core/claim-check/claim-check-options';

/** Opens a transaction, runs `work` in it and commits, or rolls back if `work` throws. */
export type InboxTransactionRunner = <T>(work: (manager: EntityManager) => Promise<T>) => Promise<T>;

/** Options of `OutboxInboxModule.forRoot()` / `forRootAsync()`. */
export interface OutboxInboxModuleOptions extends InboxSettings {
  /**
   * How the inbox opens its transactions. Default: `dataSource.transaction` (one after another on
   * SQLite). On SQLite, pass the runner that serializes the rest of your units of work, so an inbox
   * transaction never overlaps one of yours on TypeORM's single connection. Not with `connection`.
   */
  runTransaction?: InboxTransactionRunner;
  /**
   * Prometheus metrics of the inbox (`<prefix>inbox_poison_messages{consumer, state}`), as
   * `OutboxModule`'s `metrics` option: `true` for prom-client's global registry, or `{ registry, prefix }`.
   * Default: off.
   */
  metrics?: boolean | Pick<OutboxMetricsOptions, 'registry' | 'prefix'>;
  /**
   * Where claim-checked payloads (`OutboxModule`'s `claimCheck`) are read back before a handler runs:
   * `{ outboxTable, schema }` names the outbox whose `<outbox table>_payloads` table is read through
   * the inbox's own database; `readers` adds readers of other stores or databases. Default
   * `{ outboxTable: 'outbox_messages' }`. See docs/claim-check.md.
   */
  claimCheck?: InboxClaimCheckOptions;
}

/** How the inbox reads claim-checked payloads. */
export interface InboxClaimCheckOptions {
  /** The producing outbox's table, whose payloads table is in the inbox's database. Default `'outbox_messages'`; `false`: none there. */
  outboxTable?: string | false;
  /** PostgreSQL schema of that table. Default: none (the search_path decides). */
  schema?: string;
  /** The producer's `claimCheck.bucket` when it stores payloads in S3 (needs `@aws-sdk/client-s3`). Default: none. */
  bucket?: string;
  /** The `S3Client` to read `bucket` with. Default: one made from `s3Config`. */
  s3Client?: S3ClientLike;
  /** The `S3ClientConfig` of the client made when `s3Client` is not given. Default `{}`. */
  s3Config?: Record<string, unknown>;
  /** More readers: another database's payloads table (`new DatabasePayloadStore(table).reader(dialect, runner)`) or a store of your own. */
  readers?: PayloadReader[];
}

/** Fixed when the module is declared. */
export interface OutboxInboxModuleExtras {
  /** Name of the inbox table; letters, digits and `_` only. Default `'outbox_inbox'`. */
  tableName?: string;
  /** Name of the poison table (messages set aside by the poison policy); letters, digits and `_` only. Default `'outbox_inbox_poison'`. */
  poisonTableName?: string;
  /** Name of the TypeORM data source holding the inbox table and the handlers' data. Default: the default data source. */
  dataSource?: string;
  /**
   * Without TypeORM: the database of the inbox and poison tables, as `OutboxModule`'s `connection`
   * (`{ url }` or `{ pool }`). The inbox opens its transactions there, so `process()`, `@Idempotent()`
   * and the poison policy work; a handler's writes commit with the mark only through that
   * transaction (`manager<SqlTransaction>()`, or `process`'s work argument). `processIn(tx, …)`
   * records a message in your data layer's own transaction instead. Excludes `dataSource` and
   * `runTransaction`. Default: none.
   */
  connection?: OutboxConnectionOptions;
  /** Register the module globally, so `OutboxInbox` can be injected anywhere. Default `true`. */
  isGlobal?: boolean;
}
