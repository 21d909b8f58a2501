import type { DeliveryPlan } from '../core/stream/delivery-plan';
import type { OutboxDelivery, WalDeliveryOptions } from '../core/stream/wal-options';
import type { OutboxTableLocation } from '../sql/dialects/outbox-table';
import { walDeliveryPlan, walLeftBehindCheck } from '../wal/wal-delivery.plan';

/**
 * The delivery modes, and the one file outside `wal/` that knows the WAL delivery: the module asks
 * it for the plan of its mode, the CLI for what it shows and administers of the WAL mode's slot.
 * Another streaming source (another database's change log) would be one more folder beside `wal/`
 * and one more entry here, with nothing else to wire.
 */
export function resolveDeliveryPlan(settings: { delivery: OutboxDelivery; wal?: WalDeliveryOptions }, table: OutboxTableLocation & { name?: string }): DeliveryPlan {
  if (settings.delivery === 'wal') return walDeliveryPlan(settings.wal, table);
  // A slot of an earlier WAL-mode run may hold events no relay published.
  return { mode: 'table', leftBehind: [walLeftBehindCheck(settings.wal, table)] };
}

// `nest-outbox status` and `nest-outbox wal status|drop-slot`: the WAL mode's slots of a table.
export { walNames, walMessagePrefix } from '../wal/wal-names';
export { dropWalSlot, walSlotBacklog, walSlotState, type WalQuery } from '../wal/wal-slot.setup';
export { readWalSlotsOfTable, type WalSlotReading } from '../wal/wal-slot.readings';
