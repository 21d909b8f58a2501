import { OutboxConfigurationError } from '../core/outbox.errors';
import type { StreamLag } from '../core/stream/delivery-stream.port';
import { checkWalNames } from '../core/stream/wal-options';
import { walLevelNotLogical, walNoFreeSlot, walPositionTableRefused, walPublicationTableRefused, walRoleLacksReplication, walSlotInvalidatedWriteOnly, walSlotOfAnotherDatabase, walSlotPluginMismatch } from './wal.messages';
import { parseLsn } from '../core/stream/stream-message';
import type { WalWrite } from '../core/stream/wal-options';
import { isServerRestarting } from '../sql/server-restart';

/** Runs one statement and returns its rows: the app's data source, a `pg` client, or the CLI's connection. */
export type WalQuery = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

export interface WalNames {
  slotName: string;
  publicationName: string;
}

/** What the WAL mode prepares beside the slot, and how its set-up is kept from racing another instance's. */
export interface WalSlotSetup {
  /** false: a write-only instance (`relay: false`), which needs the slot to exist and nothing else. */
  streams: boolean;
  /**
   * What the writers write (`wal.write`). `'row'`: a write-only instance needs no slot (the rows wait
   * in the table for whoever relays), and a slot made anew lets go of the rows it never decoded
   * (`releaseRows`). Default `'message'`: a write needs the slot, which holds the only copy.
   */
  write?: WalWrite;
  /** The outbox table and its paused-destinations table (`"schema"."name"`, quoted), put in the publication. */
  tables?: string[];
  /**
   * The stream's saved positions and counts (WalPositionTable): the tables' DDL, the statement that
   * reads a slot's saved position ($1, as text) and the one that forgets it ($1).
   */
  positions?: { create: string[]; read?: string; forget: string };
  /** `wal.write: 'row'`: hands every stream-owned row to the table relay; returns `released` (StreamOwnedRows.releaseAll). */
  releaseRows?: { sql: string; params: unknown[] };
  /**
   * Runs the set-up's catalog changes in one transaction that holds a lock every instance takes
   * (see `walSetupLock`), so that instances starting together do not race to create the same
   * publication or table. Without it the statements run one by one.
   */
  serialized?: <T>(work: (query: WalQuery) => Promise<T>) => Promise<T>;
}

/** A slot this set-up made: the first of its name, or one made anew for a slot that was lost. */
export interface WalSlotMade {
  /** `first`: no position was saved for the slot; `missing`: one was, and the slot was gone; `invalidated`: the server had invalidated it (`wal_status` lost), and it was dropped. */
  reason: 'first' | 'missing' | 'invalidated';
  /** The position the stream had saved for the former slot (what it had published up to). */
  formerPosition?: bigint;
  /** Where the new slot starts: nothing committed before it is decoded. */
  startsAt: bigint;
  /** Stream-owned rows handed to the table relay (`wal.write: 'row'`). */
  releasedRows: number;
}

/**
 * The statement that serializes the WAL mode's set-up within a database: a transaction-scoped
 * advisory lock (released at commit or rollback, or when the connection drops).
 */
export const walSetupLock = `SELECT pg_advisory_xact_lock(hashtext('nest-outbox'), hashtext('wal-setup'))`;

/**
 * Checks that the server and role allow streaming, and creates the publication, the position table
 * and the slot the first time; an existing slot is kept as it is, with the position it was
 * confirmed to. A slot is the server's, not the database's: one of this name made by another
 * database is refused, never read. The one slot this ever drops is one the server invalidated (it
 * can stream nothing any more): it is made anew, as a missing one is. Returns the slot it made.
 *
 * `streams: false` (a write-only instance, `relay: false`) needs no REPLICATION when the slot
 * exists already; with `write: 'message'` and no slot it must create it, because WAL written before
 * a slot exists is never decoded: writing first would lose those events.
 */
export async function prepareWalSlot(query: WalQuery, names: WalNames, options: WalSlotSetup = { streams: true }): Promise<WalSlotMade | undefined> {
  checkWalNames(names);
  const [level] = await query(`SELECT current_setting('wal_level') AS level`);
  if (level.level !== 'logical') throw new OutboxConfigurationError(walLevelNotLogical(String(level.level)));
  const slot = await findSlot(query, names.slotName);
  if (slot && !options.streams && (options.write === 'row' || slot.walStatus !== 'lost')) return undefined;
  if (slot?.walStatus === 'lost' && !options.streams) throw new OutboxConfigurationError(walSlotInvalidatedWriteOnly(names.slotName));
  // Rows wait in the table for whoever relays: a writer alone needs no slot.
  if (!slot && !options.streams && options.write === 'row') return undefined;
  const [role] = await query(`SELECT current_user AS name, rolreplication OR rolsuper AS allowed FROM pg_roles WHERE rolname = current_user`);
  if (role?.allowed !== true) throw new OutboxConfigurationError(walRoleLacksReplication(String(role?.name), !options.streams));
  const serialized = options.serialized ?? ((work) => work(query));
  const making = await serialized(async (locked) => {
    // The names passed checkWalNames (lowercase letters, digits, _), so quoting them is enough.
    const publications = await locked(`SELECT 1 FROM pg_publication WHERE pubname = $1`, [names.publicationName]);
    if (publications.length === 0) {
      await locked(`CREATE PUBLICATION "${names.publicationName}"`).catch((error: unknown) => {
        // Another instance starting at the same moment created it (without `serialized`): its
        // check saw none either, and the server refuses the second one by the catalog's unique
        // index rather than "already exists".
        if (!/already exists|pg_publication_pubname_index/.test(String(error))) throw error;
      });
    }
    for (const table of options.tables ?? []) await publishTable(locked, names.publicationName, table);
    if (options.positions) {
      const positions = options.positions;
      for (const ddl of positions.create) {
        await locked(ddl).catch((error: unknown) => {
          if (isServerRestarting(error)) throw error;
          throw new OutboxConfigurationError(walPositionTableRefused(ddl, error instanceof Error ? error.message : String(error)));
        });
      }
    }
    // Asked again under the lock: another instance may have made (or remade) it meanwhile.
    const current = await findSlot(locked, names.slotName);
    if (current && current.walStatus !== 'lost') return undefined;
    // An invalidated slot can stream nothing again: dropped here, made anew below.
    if (current) await locked(`SELECT pg_drop_replication_slot($1)`, [names.slotName]);
    const saved = options.positions?.read ? (await locked(options.positions.read, [names.slotName]))[0]?.lsn : undefined;
    // A new slot starts where the server is now: a position saved for an earlier slot of this name
    // (dropped, or on the server this database was restored from) must not make it skip anything.
    if (options.positions) await locked(options.positions.forget, [names.slotName]);
    const formerPosition = typeof saved === 'string' ? parseLsn(saved) : undefined;
    return { reason: current ? 'invalidated' : formerPosition === undefined ? 'first' : 'missing', formerPosition } as const;
  });
  if (!making) return undefined;
  // Outside the set-up's transaction: a transaction that wrote cannot create a logical slot.
  const made = await query(`SELECT lsn::text AS lsn FROM pg_create_logical_replication_slot($1, 'pgoutput')`, [names.slotName]).catch((error: unknown) => {
    // Another instance starting at the same moment created it: the same slot, fine.
    if (/already exists/.test(String(error))) return undefined;
    if (isServerRestarting(error)) throw error;
    throw new OutboxConfigurationError(walNoFreeSlot(names.slotName, error instanceof Error ? error.message : String(error)));
  });
  if (!made) return undefined;
  // Made, so decoding starts now: every row committed before it goes to the table relay. A row
  // committed meanwhile is both let go and decoded; the stream then finds its aggregate held by the
  // table and leaves it to the table relay too (StreamRelay, HeldAggregates).
  const released = options.releaseRows ? Number((await query(options.releaseRows.sql, options.releaseRows.params))[0]?.released ?? 0) : 0;
  return { ...making, startsAt: parseLsn(String(made[0]?.lsn)), releasedRows: released };
}

interface FoundSlot {
  walStatus: string | null;
}

/** This database's slot of that name; one of another database is refused by name. */
async function findSlot(query: WalQuery, slotName: string): Promise<FoundSlot | undefined> {
  const [slot] = await query(
    `SELECT plugin, database, current_database() AS here, wal_status AS "walStatus" FROM pg_replication_slots WHERE slot_name = $1`,
    [slotName],
  );
  if (!slot) return undefined;
  if (slot.database !== slot.here) throw new OutboxConfigurationError(walSlotOfAnotherDatabase(slotName, String(slot.database ?? 'none: a physical slot'), String(slot.here)));
  if (slot.plugin !== 'pgoutput') throw new OutboxConfigurationError(walSlotPluginMismatch(slotName, String(slot.plugin)));
  return { walStatus: slot.walStatus === null || slot.walStatus === undefined ? null : String(slot.walStatus) };
}

/**
 * Puts a table (`"schema"."name"`, quoted) in the publication, inserts and updates only. The outbox
 * table: the stream then sees each commit that writes a row, and asks the table whether the
 * aggregates behind it have a backlog only from then on (see StreamRelay.heldBehindTable), not for
 * every batch. Its paused-destinations table: a pause reaches the stream in commit order (see
 * PausedDestinations). A publication made by an earlier version, without them, gets them here.
 */
async function publishTable(query: WalQuery, publication: string, table: string): Promise<void> {
  const [member] = await query(
    `SELECT p.pubinsert AND p.pubupdate AND NOT p.pubdelete AND NOT p.pubtruncate AS exact,
            EXISTS (SELECT 1 FROM pg_publication_rel r WHERE r.prpubid = p.oid AND r.prrelid = $2::regclass) AS member
       FROM pg_publication p WHERE p.pubname = $1`,
    [publication, table],
  );
  if (member?.member === true && member.exact === true) return;
  try {
    if (member?.member !== true) {
      await query(`ALTER PUBLICATION "${publication}" ADD TABLE ${table}`).catch((error: unknown) => {
        // Another instance starting at the same moment added it.
        if (!/already member/.test(String(error))) throw error;
      });
    }
    await query(`ALTER PUBLICATION "${publication}" SET (publish = 'insert, update')`);
  } catch (error) {
    throw new OutboxConfigurationError(walPublicationTableRefused(publication, table, error instanceof Error ? error.message : String(error)));
  }
}

/**
 * How many outbox events the slot still holds that no relay has confirmed, by peeking at it
 * (decoding without consuming). A pgoutput message record is 'M', a flags byte, its LSN (8 bytes),
 * the prefix and a NUL, the content's length (4 bytes), the content: here the outbox's JSON record.
 * PostgreSQL refuses to peek at a slot an instance streams.
 */
export async function walSlotBacklog(query: WalQuery, names: WalNames, prefix: string): Promise<number> {
  checkWalNames(names);
  const [row] = await query(
    `SELECT coalesce(sum(json_array_length(convert_from(substring(data FROM 11 + octet_length(p.prefix) + 5), 'UTF8')::json -> 'messages')), 0)::int AS events
       FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2, 'messages', 'true'),
            (SELECT convert_to($3, 'UTF8') AS prefix) AS p
      WHERE get_byte(data, 0) = 77 AND substring(data FROM 11 FOR octet_length(p.prefix) + 1) = p.prefix || '\\x00'::bytea`,
    [names.slotName, names.publicationName, prefix],
  );
  return Number(row?.events ?? 0);
}

/** Drops the slot (and its WAL) and the publication. Refused by PostgreSQL while an instance streams it. */
export async function dropWalSlot(query: WalQuery, names: WalNames): Promise<{ slot: boolean; publication: boolean }> {
  checkWalNames(names);
  const slot = (await query(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()`, [names.slotName])).length > 0;
  const publication = (await query(`SELECT 1 FROM pg_publication WHERE pubname = $1`, [names.publicationName])).length > 0;
  if (publication) await query(`DROP PUBLICATION IF EXISTS "${names.publicationName}"`);
  return { slot, publication };
}

/** How far a slot is behind: what the server keeps for it, and how long its reader takes to confirm. */
export type WalSlotLag = StreamLag;

/**
 * This database's slot's lag, or `undefined` when this database has no such slot (a slot of that
 * name in another database is not this outbox's: `foreignDatabase` names it). `invalidated`: the
 * server invalidated it (`wal_status` lost), so it streams nothing any more.
 */
export async function walSlotState(query: WalQuery, slotName: string): Promise<WalSlotLag | undefined> {
  const [row] = await query(
    `SELECT s.database = current_database() AS here, s.database, pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::float8 AS retained, s.active,
            EXTRACT(epoch FROM r.flush_lag)::float8 AS lag, s.wal_status AS "walStatus"
       FROM pg_replication_slots s LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid
      WHERE s.slot_name = $1`,
    [slotName],
  );
  if (!row) return undefined;
  if (row.here !== true) return { retainedBytes: 0, lagSeconds: null, active: false, foreignDatabase: String(row.database ?? 'none: a physical slot') };
  const lag: WalSlotLag = { retainedBytes: Math.max(0, Number(row.retained ?? 0)), lagSeconds: row.lag === null || row.lag === undefined ? null : Number(row.lag), active: row.active === true };
  if (row.walStatus === 'lost') lag.invalidated = true;
  return lag;
}
