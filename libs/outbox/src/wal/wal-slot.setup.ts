import { OutboxConfigurationError } from '../core/outbox.errors';
import type { StreamLag } from '../core/stream/delivery-stream.port';
import { checkWalNames } from '../core/stream/wal-options';
import { walLevelNotLogical, walNoFreeSlot, walPositionTableRefused, walPublicationTableRefused, walRoleLacksReplication, walSlotPluginMismatch } from '../core/stream/stream.messages';
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
  /** The outbox table and its paused-destinations table (`"schema"."name"`, quoted), put in the publication. */
  tables?: string[];
  /** The stream's saved positions and counts (WalPositionTable): the tables' DDL, and the statement that forgets a slot's position ($1). */
  positions?: { create: string[]; forget: string };
  /**
   * Runs the set-up's catalog changes in one transaction that holds a lock every instance takes
   * (see `walSetupLock`), so that instances starting together do not race to create the same
   * publication or table. Without it the statements run one by one.
   */
  serialized?: <T>(work: (query: WalQuery) => Promise<T>) => Promise<T>;
}

/**
 * The statement that serializes the WAL mode's set-up within a database: a transaction-scoped
 * advisory lock (released at commit or rollback, or when the connection drops).
 */
export const walSetupLock = `SELECT pg_advisory_xact_lock(hashtext('nest-outbox'), hashtext('wal-setup'))`;

/**
 * Checks that the server and role allow streaming, and creates the publication, the position table
 * and the slot the first time; an existing slot is kept as it is, with the position it was
 * confirmed to. Nothing here ever drops a slot: that is `dropWalSlot`, called explicitly.
 *
 * `streams: false` (a write-only instance, `relay: false`) needs no REPLICATION when the slot
 * exists already; without one it must create it, because WAL written before a slot exists is
 * never decoded: writing first would lose those events.
 */
export async function prepareWalSlot(query: WalQuery, names: WalNames, options: WalSlotSetup = { streams: true }): Promise<void> {
  checkWalNames(names);
  const [level] = await query(`SELECT current_setting('wal_level') AS level`);
  if (level.level !== 'logical') throw new OutboxConfigurationError(walLevelNotLogical(String(level.level)));
  const [slot] = await query(`SELECT plugin FROM pg_replication_slots WHERE slot_name = $1`, [names.slotName]);
  if (slot && slot.plugin !== 'pgoutput') throw new OutboxConfigurationError(walSlotPluginMismatch(names.slotName, String(slot.plugin)));
  if (slot && !options.streams) return;
  const [role] = await query(`SELECT current_user AS name, rolreplication OR rolsuper AS allowed FROM pg_roles WHERE rolname = current_user`);
  if (role?.allowed !== true) throw new OutboxConfigurationError(walRoleLacksReplication(String(role?.name), !options.streams));
  const serialized = options.serialized ?? ((work) => work(query));
  const createSlot = await serialized(async (locked) => {
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
    if ((await locked(`SELECT 1 FROM pg_replication_slots WHERE slot_name = $1`, [names.slotName])).length > 0) return false;
    // A new slot starts where the server is now: a position saved for an earlier slot of this name
    // (dropped, or on the server this database was restored from) must not make it skip anything.
    if (options.positions) await locked(options.positions.forget, [names.slotName]);
    return true;
  });
  if (!createSlot) return;
  // Outside the set-up's transaction: a transaction that wrote cannot create a logical slot.
  await query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [names.slotName]).catch((error: unknown) => {
    // Another instance starting at the same moment created it: the same slot, fine.
    if (/already exists/.test(String(error))) return;
    if (isServerRestarting(error)) throw error;
    throw new OutboxConfigurationError(walNoFreeSlot(names.slotName, error instanceof Error ? error.message : String(error)));
  });
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
  const slot = (await query(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, [names.slotName])).length > 0;
  const publication = (await query(`SELECT 1 FROM pg_publication WHERE pubname = $1`, [names.publicationName])).length > 0;
  if (publication) await query(`DROP PUBLICATION IF EXISTS "${names.publicationName}"`);
  return { slot, publication };
}

/** How far a slot is behind: what the server keeps for it, and how long its reader takes to confirm. */
export type WalSlotLag = StreamLag;

/** The slot's lag, or `undefined` when there is no such slot. */
export async function walSlotState(query: WalQuery, slotName: string): Promise<WalSlotLag | undefined> {
  const [row] = await query(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::float8 AS retained, s.active,
            EXTRACT(epoch FROM r.flush_lag)::float8 AS lag
       FROM pg_replication_slots s LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid
      WHERE s.slot_name = $1`,
    [slotName],
  );
  if (!row) return undefined;
  return { retainedBytes: Math.max(0, Number(row.retained ?? 0)), lagSeconds: row.lag === null || row.lag === undefined ? null : Number(row.lag), active: row.active === true };
}
