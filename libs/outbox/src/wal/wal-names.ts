import { checkWalNames, type WalDeliveryOptions } from '../core/stream/wal-options';
import type { WalNames } from './wal-slot.setup';

/**
 * The slot and publication of an outbox table, defaults applied. The names go into SQL text, so
 * they are checked here, defaults too: a table or schema name that is no identifier is refused.
 */
export function walNames(table: { tableName: string; schema?: string; name?: string }, wal: WalDeliveryOptions = {}): WalNames {
  // A named outbox's name is in it: slots are per server, and two outboxes of one app may use two databases of the same server.
  const named = table.name === undefined ? '' : `${table.name}_`;
  const stem = `outbox_${named}${table.schema === undefined ? '' : `${table.schema}_`}${table.tableName}`.toLowerCase().slice(0, 63);
  const slotName = wal.slotName ?? stem;
  const names = { slotName, publicationName: wal.publicationName ?? slotName };
  checkWalNames(names);
  return names;
}

/**
 * The prefix of the outbox's logical messages for one stream. A slot decodes every message of its
 * database, so the prefix names the slot the messages are for: apps (or tests) that share a
 * database with slots of their own never read each other's events.
 */
export function walMessagePrefix(slotName: string): string {
  return `nest-outbox:${slotName}`;
}
