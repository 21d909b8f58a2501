import type { OutboxTable } from '../sql/dialects/outbox-table';
import { validateDelivery } from '../core/stream/wal-options';
import { dropWalSlot, walMessagePrefix, walNames, walSlotBacklog, walSlotState, type WalQuery } from '../delivery/delivery-modes';
import { CliError } from './cli.error';
import { missingUrl, needsArgument, walNeedsPostgresUrl, walSlotHoldsEvents, walSlotOfAnotherDatabase } from './cli.messages';
import { connect } from './cli-connection';
import type { CliIo } from './cli-io';

/**
 * `nest-outbox wal status|drop-slot [slot]`: the only way the library drops a slot. Dropping one
 * loses what it holds that no relay has published yet, so it is an explicit operator step.
 */
export async function runWalCommand(
  sub: string | undefined,
  slot: string | undefined,
  table: OutboxTable,
  { url, force }: { url: string | undefined; force: boolean },
  io: CliIo,
): Promise<number> {
  if (sub !== 'status' && sub !== 'drop-slot') throw new CliError(needsArgument('wal', 'status or drop-slot'));
  if (slot !== undefined) validateDelivery('wal', { slotName: slot });
  const names = walNames({ tableName: table.name, schema: table.schema }, slot === undefined ? {} : { slotName: slot });
  if (!url) throw new CliError(missingUrl());
  if (!/^postgres(ql)?:\/\//.test(url)) throw new CliError(walNeedsPostgresUrl(sub));
  const opened = await connect(url);
  const query: WalQuery = async (sql, params) => (await opened.connection.run({ sql, params: params ?? [] })).records;
  try {
    if (sub === 'status') {
      const state = await walSlotState(query, names.slotName);
      if (!state) {
        io.out(`No slot "${names.slotName}" in this database.`);
        return 1;
      }
      if (state.foreignDatabase !== undefined) {
        io.out(`Slot "${names.slotName}" belongs to the database "${state.foreignDatabase}", not this one: it decodes none of this database's events.`);
        return 1;
      }
      if (state.invalidated) {
        io.out(`Slot "${names.slotName}" was invalidated by the server (past max_slot_wal_keep_size): it streams nothing; an instance that relays makes it anew.`);
        return 1;
      }
      // Peeking is refused while an instance streams the slot; it publishes what the slot holds anyway.
      const backlog = state.active ? '' : `, ${await walSlotBacklog(query, names, walMessagePrefix(names.slotName))} outbox event(s) in it not yet published`;
      io.out(`Slot "${names.slotName}": ${state.retainedBytes} bytes of WAL retained, ${state.active ? 'streamed by an instance' : 'not streamed now'}${backlog}.`);
      return 0;
    }
    const state = await walSlotState(query, names.slotName);
    if (state?.foreignDatabase !== undefined) throw new CliError(walSlotOfAnotherDatabase(names.slotName, state.foreignDatabase));
    if (state && !state.active && !state.invalidated && !force) {
      const events = await walSlotBacklog(query, names, walMessagePrefix(names.slotName));
      if (events > 0) throw new CliError(walSlotHoldsEvents(names.slotName, events));
    }
    const dropped = await dropWalSlot(query, names);
    io.out(dropped.slot ? `Dropped slot "${names.slotName}"${dropped.publication ? ` and publication "${names.publicationName}"` : ''}.` : `No slot "${names.slotName}".`);
    return 0;
  } finally {
    await opened.close();
  }
}
