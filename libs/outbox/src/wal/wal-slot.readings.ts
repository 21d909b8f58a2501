import type { OutboxTable } from '../sql/dialects/outbox-table';
import { walNames } from './wal-names';
import { walSlotState, type WalQuery, type WalSlotLag } from './wal-slot.setup';

/** A slot of this table as `nest-outbox status` shows it; `missing`: its stream saved a position here, the slot is gone. */
export type WalSlotReading = WalSlotLag & { slotName: string; missing?: boolean };

/**
 * The WAL mode's slots of a table on PostgreSQL: those whose stream saved a position beside it
 * (`<table>_wal_positions`), missing or not, else the default name (`outbox_<schema>_<table>`) if
 * this database has that slot. Slots are the server's: one of another database is not this table's.
 */
export async function readWalSlotsOfTable(query: WalQuery, table: OutboxTable): Promise<WalSlotReading[]> {
  const [positions] = await query(`SELECT to_regclass($1) IS NOT NULL AS "present"`, [table.walPositions.quoted()]);
  const saved = positions?.present === true ? (await query(`SELECT slot_name AS "slotName" FROM ${table.walPositions.quoted()} ORDER BY 1`)).map((row) => String(row.slotName)) : [];
  if (saved.length === 0) {
    const slotName = walNames({ tableName: table.name, schema: table.schema }).slotName;
    const state = await walSlotState(query, slotName);
    return state && state.foreignDatabase === undefined ? [{ slotName, ...state }] : [];
  }
  const slots = await Promise.all(saved.map(async (slotName) => ({ slotName, state: await walSlotState(query, slotName) })));
  return slots.map(({ slotName, state }) => (state ? { slotName, ...state } : { slotName, missing: true, retainedBytes: 0, lagSeconds: null, active: false }));
}
