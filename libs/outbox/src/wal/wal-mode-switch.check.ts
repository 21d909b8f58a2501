import { OutboxConfigurationError } from '../core/outbox.errors';
import { walEventsStrandedInSlot, walSlotLeftBehind, walSlotUncheckable } from './wal.messages';
import { walMessagePrefix } from './wal-names';
import { walSlotBacklog, type WalNames, type WalQuery } from './wal-slot.setup';
import { StreamOwnedRows } from '../sql/dialects/stream-owned-rows.sql';
import type { OutboxTableLocation } from '../sql/dialects/outbox-table';

/**
 * A relay in the table mode never reads the WAL mode's slot: events a WAL-mode instance wrote and
 * no relay published yet would wait there unseen after a switch back. So a table-mode start on
 * PostgreSQL looks for the slot of this outbox in this database and refuses while it holds any.
 * A slot that an instance streams right now is left to it (a rolling switch). An empty slot left
 * behind loses nothing but keeps the server's WAL from being recycled: what to say about it is returned.
 */
export async function refuseStrandedWalEvents(query: WalQuery, names: WalNames): Promise<string | undefined> {
  const [slot] = await query(
    `SELECT active, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::float8 AS retained FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()`,
    [names.slotName],
  );
  if (!slot || slot.active === true) return undefined;
  let events: number;
  try {
    events = await walSlotBacklog(query, names, walMessagePrefix(names.slotName));
  } catch (error) {
    throw new OutboxConfigurationError(walSlotUncheckable(names.slotName, error instanceof Error ? error.message : String(error)));
  }
  if (events > 0) throw new OutboxConfigurationError(walEventsStrandedInSlot(names.slotName, events));
  return walSlotLeftBehind(names.slotName, Math.max(0, Number(slot.retained ?? 0)));
}

/**
 * A table-mode start after the WAL mode with `wal.write: 'row'`: the rows the stream owned and had
 * not published yet go to this relay (no stream reads them any more). Returns how many.
 */
export async function releaseStreamOwnedRows(query: WalQuery, table: OutboxTableLocation): Promise<number> {
  const { sql, params } = new StreamOwnedRows(table).releaseAll();
  const [row] = await query(sql, params);
  return Number(row?.released ?? 0);
}
