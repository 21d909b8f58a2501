import { OutboxConfigurationError } from '../core/outbox.errors';
import { walLevelNotLogical, walNoFreeSlot, walRoleLacksReplication, walSlotPluginMismatch } from '../core/stream/stream.messages';

/** Runs one statement and returns its rows: the app's data source, a `pg` client, or the CLI's connection. */
export type WalQuery = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

export interface WalNames {
  slotName: string;
  publicationName: string;
}

/**
 * Checks that the server and role allow streaming, and creates the publication and the slot the
 * first time; an existing slot is kept as it is, with the position it was confirmed to. Nothing
 * here ever drops a slot: that is `dropWalSlot`, called explicitly.
 *
 * `streams: false` (a write-only instance, `relay: false`) needs no REPLICATION when the slot
 * exists already; without one it must create it, because WAL written before a slot exists is
 * never decoded: writing first would lose those events.
 */
export async function prepareWalSlot(query: WalQuery, names: WalNames, options: { streams: boolean } = { streams: true }): Promise<void> {
  const [level] = await query(`SELECT current_setting('wal_level') AS level`);
  if (level.level !== 'logical') throw new OutboxConfigurationError(walLevelNotLogical(String(level.level)));
  const [slot] = await query(`SELECT plugin FROM pg_replication_slots WHERE slot_name = $1`, [names.slotName]);
  if (slot && slot.plugin !== 'pgoutput') throw new OutboxConfigurationError(walSlotPluginMismatch(names.slotName, String(slot.plugin)));
  if (slot && !options.streams) return;
  const [role] = await query(`SELECT current_user AS name, rolreplication OR rolsuper AS allowed FROM pg_roles WHERE rolname = current_user`);
  if (role?.allowed !== true) throw new OutboxConfigurationError(walRoleLacksReplication(String(role?.name), !options.streams));
  // Names are checked identifiers (wal-options.ts), so quoting them is enough.
  const publications = await query(`SELECT 1 FROM pg_publication WHERE pubname = $1`, [names.publicationName]);
  if (publications.length === 0) {
    await query(`CREATE PUBLICATION "${names.publicationName}"`).catch((error: unknown) => {
      if (!/already exists/.test(String(error))) throw error;
    });
  }
  if (slot) return;
  await query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [names.slotName]).catch((error: unknown) => {
    // Another instance starting at the same moment created it: the same slot, fine.
    if (/already exists/.test(String(error))) return;
    throw new OutboxConfigurationError(walNoFreeSlot(names.slotName, error instanceof Error ? error.message : String(error)));
  });
}

/** Drops the slot (and its WAL) and the publication. Refused by PostgreSQL while an instance streams it. */
export async function dropWalSlot(query: WalQuery, names: WalNames): Promise<{ slot: boolean; publication: boolean }> {
  const slot = (await query(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, [names.slotName])).length > 0;
  const publication = (await query(`SELECT 1 FROM pg_publication WHERE pubname = $1`, [names.publicationName])).length > 0;
  if (publication) await query(`DROP PUBLICATION IF EXISTS "${names.publicationName}"`);
  return { slot, publication };
}

/** How far the slot lags behind the server's WAL: bytes retained and whether someone streams it. */
export async function walSlotState(query: WalQuery, slotName: string): Promise<{ retainedBytes: number; active: boolean } | undefined> {
  const [row] = await query(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::float8 AS lag, active FROM pg_replication_slots WHERE slot_name = $1`,
    [slotName],
  );
  return row ? { retainedBytes: Number(row.lag ?? 0), active: row.active === true } : undefined;
}
