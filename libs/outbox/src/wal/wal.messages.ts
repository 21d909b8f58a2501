/** Texts of the WAL delivery mode (`delivery: 'wal'`) about PostgreSQL, its slot and publication, each naming what is wrong and what to do. */

export const walLevelNotLogical = (level: string) =>
  `OutboxModule option "delivery" is 'wal', but the PostgreSQL server runs with wal_level = ${level}: it must be "logical". ` +
  `Set wal_level = logical in postgresql.conf (or ALTER SYSTEM SET wal_level = logical) and restart the server, or leave "delivery" at 'table'.`;

export const walRoleLacksReplication = (role: string, writeOnly: boolean) =>
  (writeOnly
    ? `OutboxModule option "delivery" is 'wal' and the replication slot does not exist yet; the database role "${role}" cannot create it (no REPLICATION attribute), ` +
      `and events written before the slot exists would never reach the stream. Start an instance that relays first (it creates the slot), or `
    : `OutboxModule option "delivery" is 'wal', but the database role "${role}" has no REPLICATION attribute, which reading a replication slot needs. `) +
  `Run ALTER ROLE "${role}" REPLICATION as a superuser (and allow it in pg_hba.conf), or leave "delivery" at 'table'.`;

export const walNoFreeSlot = (slot: string, cause: string) =>
  `OutboxModule option "wal.slotName": cannot create the replication slot "${slot}" (${cause}). ` +
  `When all slots are taken, raise max_replication_slots (and max_wal_senders) on the server and restart it, or drop a slot nobody reads (SELECT pg_drop_replication_slot(name)).`;

export const walSlotPluginMismatch = (slot: string, plugin: string) =>
  `OutboxModule option "wal.slotName": the replication slot "${slot}" exists but decodes with "${plugin}", not "pgoutput". ` +
  `Choose another wal.slotName, or drop that slot if nothing else reads it.`;

export const walUndecodableMessage = (prefix: string, lsn: string, cause: string) =>
  `The WAL message at ${lsn} with prefix "${prefix}" is not an outbox record (${cause}). ` +
  `The stream stops before it and the slot is not confirmed past it, so nothing after it is lost: find the writer that uses this prefix, then restart the app.`;

export const walEventsStrandedInSlot = (slot: string, events: number) =>
  `The replication slot "${slot}" holds ${events} outbox event(s) written in the WAL delivery mode that no relay has ` +
  `published, and this instance runs the table mode, whose relay never reads the slot. Start an instance with ` +
  `delivery: 'wal' until "nest-outbox wal status" shows none, then switch; or drop them with "nest-outbox wal drop-slot --force".`;

export const walSlotLeftBehind = (slot: string, retainedBytes: number) =>
  `The replication slot "${slot}" of the WAL delivery mode is still there, empty of outbox events, and this instance runs the ` +
  `table mode, which never reads it. It keeps the server from recycling WAL (${retainedBytes} bytes retained now, more as the ` +
  `database writes): if this outbox stays in the table mode, drop it with "nest-outbox wal drop-slot".`;

export const walSlotUncheckable = (slot: string, cause: string) =>
  `The replication slot "${slot}" of the WAL delivery mode exists, and this instance (table mode) cannot tell whether it still ` +
  `holds unpublished outbox events (${cause}). Run "nest-outbox wal status" as a role with REPLICATION: start an instance ` +
  `with delivery: 'wal' until it shows none, then drop the slot with "nest-outbox wal drop-slot".`;

export const walTableUnreachable = (cause: string) =>
  `the outbox table could not be read or written (${cause}); the stream ends so that the server is not kept waiting for its confirmation, and reads again from the last one`;

export const walPublicationTableRefused = (publication: string, table: string, cause: string) =>
  `OutboxModule option "delivery" is 'wal', and the publication "${publication}" must hold the outbox table ${table} (inserts and updates), ` +
  `so that the stream sees rows written to the table and keeps each aggregate's order behind them; adding it failed: ${cause}. ` +
  `Run ALTER PUBLICATION "${publication}" ADD TABLE ${table}; ALTER PUBLICATION "${publication}" SET (publish = 'insert, update'); as the table's owner, then start again.`;

export const walPositionTableRefused = (ddl: string, cause: string) =>
  `OutboxModule option "delivery" is 'wal', and the stream keeps the position it has published up to, and counts of what it published, in tables beside the outbox table ` +
  `(so that a PostgreSQL restart does not make it publish again what it already had, and stats count streamed messages); creating one failed: ${cause}. ` +
  `Run ${ddl}; as the schema's owner (and grant the app's role SELECT, INSERT, UPDATE, DELETE on it), then start again.`;

export const walSlotOfAnotherDatabase = (slot: string, owner: string, here: string) =>
  `OutboxModule option "wal.slotName": the replication slot "${slot}" belongs to the database "${owner}", not to "${here}". ` +
  `Slots are the server's, and a slot decodes its own database's WAL only: reading it would publish none of this database's events. ` +
  `Give this outbox a slot of its own: wal: { slotName: '<unique name>' } (each database of one server needs its own).`;

export const walSlotInvalidatedWriteOnly = (slot: string) =>
  `OutboxModule option "delivery" is 'wal' with wal.write 'message', and the replication slot "${slot}" was invalidated by the server ` +
  `(wal_status lost, past max_slot_wal_keep_size): a message written now would be decoded by no slot. Start an instance that relays ` +
  `(it makes the slot anew), or use wal.write 'row', whose rows outlive a slot.`;

export const walSlotMadeAnew = (slot: string, reason: 'missing' | 'invalidated', formerPosition: string | undefined, startsAt: string, keptRows: number, eventsMayBeLost: boolean) =>
  `WAL relay: the replication slot "${slot}" ${reason === 'invalidated' ? 'was invalidated by the server (wal_status lost)' : 'was gone'}` +
  `${formerPosition === undefined ? '' : ` after the stream had published up to ${formerPosition}`}; a new slot starts at ${startsAt}. ` +
  (eventsMayBeLost
    ? `Events committed between those positions were in that slot only (wal.write 'message') and may be lost: compare your source of truth with what consumers got. ` +
      `Counted in outbox_wal_slot_incidents_total; health reports it until this instance restarts.`
    : `${keptRows} row(s) it had not published went to the table relay (wal.write 'row'): nothing is lost. Counted in outbox_wal_slot_incidents_total.`);

export const walReaderThreadConnection = (key: string, cause: string) =>
  `OutboxModule option "wal.readerThread" is 'worker', and the database connection's setting "${key}" cannot be handed to a worker thread (${cause}). ` +
  `Give it as plain data (strings, numbers, Buffers: an ssl object without functions, say), or leave "wal.readerThread" at 'main'.`;

export const walReaderThreadEntryMissing = (entry: string) =>
  `OutboxModule option "wal.readerThread" is 'worker', and the reader thread's entry ${entry} is not there: the thread starts from that file of the package. ` +
  `An app bundled into one file must leave @nest-outbox/outbox out of the bundle (webpack "externals", say) or ship the package's files beside it; or leave "wal.readerThread" at 'main'.`;
