import type { InboxSettings } from '../../core/inbox/inbox.port';

/** Options of `OutboxInboxModule.forRoot()` / `forRootAsync()`. */
export type OutboxInboxModuleOptions = InboxSettings;

/** Fixed when the module is declared. */
export interface OutboxInboxModuleExtras {
  /** Name of the inbox table; letters, digits and `_` only. Default `'outbox_inbox'`. */
  tableName?: string;
  /** Name of the TypeORM data source holding the inbox table and the handlers' data. Default: the default data source. */
  dataSource?: string;
  /** Register the module globally, so `OutboxInbox` can be injected anywhere. Default `true`. */
  isGlobal?: boolean;
}

/** Keys `OutboxInboxModule` accepts, for the unknown-key check. */
export const INBOX_OPTION_KEYS = ['retentionMs', 'pruneIntervalMs', 'pruneBatchSize'] as const;
