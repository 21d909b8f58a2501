import type { LeftBehindCheck, StreamDeliveryPlan } from '../core/stream/delivery-plan';
import { WAL_DEFAULTS, type WalDeliveryOptions } from '../core/stream/wal-options';
import type { OutboxTableLocation } from '../sql/dialects/outbox-table';
import { whileServerRestarts } from '../sql/server-restart';
import { refuseStrandedWalEvents, releaseStreamOwnedRows } from './wal-mode-switch.check';
import { walMessagePrefix, walNames } from './wal-names';
import type { WalQuery } from './wal-slot.setup';
import { WalStream } from './wal-stream';

type OutboxOfPlan = OutboxTableLocation & { name?: string };

/** The WAL mode's plan: the writer's prefix (naming the slot) and write, and the stream of the slot. */
export function walDeliveryPlan(wal: WalDeliveryOptions | undefined, table: OutboxOfPlan): StreamDeliveryPlan {
  const slot = walNames(table, wal);
  const prefix = walMessagePrefix(slot.slotName);
  const write = wal?.write ?? WAL_DEFAULTS.write;
  return { mode: 'wal', prefix, write, createStream: (dependencies) => new WalStream({ ...dependencies, slot, prefix, write }) };
}

/**
 * What the table mode checks at start on PostgreSQL: the slot an earlier WAL-mode run of this
 * outbox would have left (named as that run would have named it) must hold no unpublished event,
 * and the rows its stream owned go to the table relay. The names are checked now, at resolution.
 */
export function walLeftBehindCheck(wal: WalDeliveryOptions | undefined, table: OutboxOfPlan): LeftBehindCheck {
  const formerSlot = walNames(table, wal);
  return async (connection, logger) => {
    if (connection.dialect !== 'postgres') return;
    const query: WalQuery = async (sql, params) => (await connection.run({ sql, params: params ?? [] })).records;
    const restarts = { logger };
    const leftBehind = await whileServerRestarts('looking for a WAL slot left behind', () => refuseStrandedWalEvents(query, formerSlot), restarts);
    if (leftBehind) logger.warn(leftBehind);
    const released = await whileServerRestarts('taking over the rows of the WAL mode', () => releaseStreamOwnedRows(query, table), restarts);
    if (released > 0) logger.log(`${released} row(s) the WAL stream had not published yet go to this relay (table mode).`);
  };
}
