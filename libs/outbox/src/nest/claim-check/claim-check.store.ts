import type { ResolvedClaimCheck } from '../../core/claim-check/claim-check-options';
import type { PayloadCollector, PayloadStore } from '../../core/claim-check/payload-store.port';
import type { SqlConnection } from '../../core/sql-connection.port';
import { S3PayloadStore } from '../../adapters/s3/s3-payload.store';
import { DatabasePayloadStore } from '../../sql/claim-check/database-payload.store';
import { OutboxTable, type OutboxTableLocation } from '../../sql/dialects/outbox-table';

/** A claim-check store as the module uses it: the writer puts payloads, cleanup collects them. */
export interface ModulePayloadStore extends PayloadStore {
  collector(connection: SqlConnection): PayloadCollector;
}

// One store per module (its S3 client too), shared by the writer and the cleanup host.
const stores = new WeakMap<ResolvedClaimCheck, ModulePayloadStore>();

/** The store `claimCheck` names, on the module's outbox table; `undefined` without a claim check. */
export function claimCheckStore(claimCheck: ResolvedClaimCheck | undefined, table: OutboxTableLocation): ModulePayloadStore | undefined {
  if (!claimCheck) return undefined;
  let store = stores.get(claimCheck);
  if (!store) {
    store = claimCheck.store === 'database' ? new DatabasePayloadStore(table) : new S3PayloadStore(claimCheck, OutboxTable.of(table));
    stores.set(claimCheck, store);
  }
  return store;
}
