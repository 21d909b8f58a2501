import { OutboxConfigurationError } from '../core/outbox.errors';
import { walEventsStrandedInSlot, walSlotUncheckable } from '../core/stream/stream.messages';
import { walMessagePrefix } from '../core/stream/wal-record';
import { walSlotBacklog, type WalNames, type WalQuery } from './wal-slot.setup';

/**
 * A relay in the table mode never reads the WAL mode's slot: events a WAL-mode instance wrote and
 * no relay published yet would wait there unseen after a switch back. So a table-mode start on
 * PostgreSQL looks for the slot of this outbox in this database and refuses while it holds any.
 * A slot that an instance streams right now is left to it (a rolling switch).
 */
export async function refuseStrandedWalEvents(query: WalQuery, names: WalNames): Promise<void> {
  const [slot] = await query(`SELECT active FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()`, [names.slotName]);
  if (!slot || slot.active === true) return;
  let events: number;
  try {
    events = await walSlotBacklog(query, names, walMessagePrefix(names.slotName));
  } catch (error) {
    throw new OutboxConfigurationError(walSlotUncheckable(names.slotName, error instanceof Error ? error.message : String(error)));
  }
  if (events > 0) throw new OutboxConfigurationError(walEventsStrandedInSlot(names.slotName, events));
}
