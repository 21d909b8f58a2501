import { loadOptional } from '../core/optional-peer';

/** The node-postgres connection settings the replication connection takes (a subset of pg's ClientConfig). */
export interface ReplicationConnectionConfig {
  connectionString?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string | (() => string | Promise<string>);
  database?: string;
  ssl?: unknown;
  application_name?: string;
}

/** The part of `pg-logical-replication` (an optional peer dependency) the reader uses. */
export interface PgLogicalReplication {
  LogicalReplicationService: new (
    config: ReplicationConnectionConfig,
    options: { acknowledge: { auto: boolean; timeoutSeconds: number }; flowControl: { enabled: boolean } },
  ) => {
    on(event: string, listener: (...args: never[]) => unknown): unknown;
    subscribe(plugin: unknown, slotName: string, startLsn?: string): Promise<unknown>;
    acknowledge(lsn: string, ping?: boolean): Promise<boolean>;
    destroy(): Promise<unknown>;
  };
  PgoutputPlugin: new (options: { protoVersion: 1; publicationNames: string[]; messages: boolean }) => unknown;
}

/** Loaded only when `delivery` is 'wal'; an app in the table mode never needs the package. */
export function loadPgLogicalReplication(): PgLogicalReplication {
  return loadOptional<PgLogicalReplication>('pg-logical-replication', 'delivery', WAL_ONLY_PACKAGE_OTHERWISE);
}

/** `delivery` has no "off": the way around a package the WAL mode needs is the table mode. */
export const WAL_ONLY_PACKAGE_OTHERWISE = `set delivery: 'table' (the default)`;
