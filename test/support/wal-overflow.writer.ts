import type { DataSource } from 'typeorm';
import type { OutboxMessageInput } from '@nest-outbox/outbox';
import type { NewOutboxMessage } from '@nest-outbox/outbox/core';
import { OutboxMessageFactory } from '../../libs/outbox/src/core/outbox-message.factory';
import { toDraft } from '../../libs/outbox/src/core/outbox-message-input';
import { resolveOutboxSettings } from '../../libs/outbox/src/core/outbox-options';
// The WAL mode's way into the table: what its stream moves there when a message keeps failing.
import { TableOverflow } from '../../libs/outbox/src/wal/table-overflow';
import type { StreamMessage } from '../../libs/outbox/src/core/stream/stream-message';
import { sqlConnectionOf } from '../../libs/outbox/src/typeorm/typeorm-sql.connection';
import { dropWalSlot } from '../../libs/outbox/src/wal/wal-slot.setup';

/** Messages as the stream moves them to the table: in order, unattempted, with the note of the move. */
export function asMoved(messages: NewOutboxMessage[], error = 'moved by the test'): Array<{ message: StreamMessage; attempts: number; error: string }> {
  return messages.map(({ occurredAt, delayMs: _delay, ...fields }, index) => ({ message: { ...fields, occurredAt: occurredAt.toISOString(), commit: 0n, index }, attempts: 0, error }));
}

/**
 * How rows reach the outbox table in the WAL delivery mode: messages built by the module's factory
 * from the explicit API's input, then moved there by the stream's overflow (TableOverflow), as when
 * their publish kept failing. Resolves the ids, in order.
 */
export function walOverflowWriter(dataSource: DataSource, table = 'outbox_messages', options: { defaultTopic?: string; deadLetterPolicy?: 'hold' | 'skip' } = {}) {
  const factory = new OutboxMessageFactory(resolveOutboxSettings({ relay: false, defaultTopic: options.defaultTopic }, () => 'test'));
  const overflow = new TableOverflow(sqlConnectionOf(dataSource), table, { deadLetterPolicy: options.deadLetterPolicy ?? 'hold' });
  return async (inputs: OutboxMessageInput[]): Promise<string[]> => {
    const messages = inputs.flatMap((input) => factory.create(toDraft(input)));
    await overflow.divert(asMoved(messages), 0);
    return messages.map((message) => message.id);
  };
}

/**
 * A write-only WAL-mode instance's options on a private PostgreSQL schema (its slot named after the
 * schema), and the removal of that slot: a slot holds the server's WAL until it is dropped.
 */
/**
 * A write-only instance (relay: false) in the WAL mode, as the console tests run it. With wal.write
 * 'message' its start makes the slot and the stream's tables, as a relaying instance would; a
 * write-only instance writing rows makes none (its rows wait for whoever relays).
 */
export function walInstanceOptions(schema: string): { delivery: 'wal'; wal: { slotName: string; write: 'message' } } {
  return { delivery: 'wal', wal: { slotName: `${schema}_slot`, write: 'message' } };
}

export async function dropWalInstanceSlot(dataSource: DataSource, schema: string): Promise<void> {
  const slotName = walInstanceOptions(schema).wal.slotName;
  await dropWalSlot((sql, params) => dataSource.query(sql, params), { slotName, publicationName: slotName });
}
