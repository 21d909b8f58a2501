import { WAL_DEFAULTS, walNames, type WalDeliveryOptions, type WalWrite } from './wal-options';
import { walMessagePrefix } from './wal-record';

/**
 * How committed events reach the relay, resolved once from the options: everything that differs
 * between the delivery modes reads this one object (the writer's encoding, which relay streams,
 * the table relay's check for a slot left behind), rather than the `delivery` option.
 * - `table`: the writer inserts rows; the table relay leases them.
 * - `wal`: the writer puts rows the stream owns in the table (`write: 'row'`) or messages in the WAL
 *   under `prefix` (`write: 'message'`), delayed ones as rows the table relay owns; the stream reads
 *   them from `slot`; the table relay publishes what the stream moved to the table.
 */
export type DeliveryPlan =
  | { readonly mode: 'table'; readonly formerSlot: { slotName: string; publicationName: string } }
  | { readonly mode: 'wal'; readonly slot: { slotName: string; publicationName: string }; readonly prefix: string; readonly write: WalWrite };

export function resolveDeliveryPlan(settings: { delivery: 'table' | 'wal'; wal?: WalDeliveryOptions }, table: { tableName: string; schema?: string; name?: string }): DeliveryPlan {
  const slot = walNames(table, settings.wal);
  // The table mode keeps the slot's name: a slot of an earlier WAL-mode run may hold events no relay published.
  if (settings.delivery === 'table') return { mode: 'table', formerSlot: slot };
  return { mode: 'wal', slot, prefix: walMessagePrefix(slot.slotName), write: settings.wal?.write ?? WAL_DEFAULTS.write };
}
