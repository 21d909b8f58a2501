import type { ClientConfig } from 'pg';
import { loadOptional } from '../observability/optional-dependency';

/** The part of `pg-logical-replication` (an optional peer dependency) the reader uses. */
export interface PgLogicalReplication {
  LogicalReplicationService: new (
    config: ClientConfig,
    options: { acknowledge: { auto: boolean; timeoutSeconds: number }; flowControl: { enabled: boolean } },
  ) => {
    on(event: string, listener: (...args: never[]) => unknown): unknown;
    subscribe(plugin: unknown, slotName: string): Promise<unknown>;
    acknowledge(lsn: string, ping?: boolean): Promise<boolean>;
    destroy(): Promise<unknown>;
  };
  PgoutputPlugin: new (options: { protoVersion: 1; publicationNames: string[]; messages: boolean }) => unknown;
}

/** Loaded only when `delivery` is 'wal'; an app in the table mode never needs the package. */
export function loadPgLogicalReplication(): PgLogicalReplication {
  return loadOptional<PgLogicalReplication>('pg-logical-replication', 'delivery');
}
