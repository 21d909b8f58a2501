import type { OutboxWalStats } from '../../core/stats/outbox-stats';
import type { WalNames, WalSlotLag } from '../../postgres-wal/wal-slot.setup';

/** What the stats need of `OutboxWalHost`: its slot, and its cached reading of the slot's lag. */
export interface WalSlotSource {
  readonly slot: WalNames | undefined;
  slotLag(): Promise<WalSlotLag | undefined>;
}

/** The slot for the stats snapshot; `undefined` in the table mode. A missing slot reads as nothing retained and not streamed. */
export async function walStatsOf(source: WalSlotSource): Promise<OutboxWalStats | undefined> {
  const slot = source.slot;
  if (!slot) return undefined;
  const lag = await source.slotLag();
  return { slot: slot.slotName, retainedBytes: lag?.retainedBytes ?? null, lagSeconds: lag?.lagSeconds ?? null, active: lag?.active ?? false };
}
