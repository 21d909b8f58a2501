/** Texts of the streaming delivery said by the core and the module, each naming what is wrong and what to do (the WAL mode's own about PostgreSQL: wal/wal.messages.ts). */

export const walNeedsPostgres = (type: string) =>
  `OutboxModule option "delivery" is 'wal', which streams from PostgreSQL's write-ahead log, but the data source uses the TypeORM driver "${type}". ` +
  `The WAL delivery mode exists on PostgreSQL only: leave "delivery" out (or set it to 'table') on ${type}.`;

export const invalidSlotName = (option: string, got: string) =>
  `Invalid OutboxModule option "${option}": expected an identifier PostgreSQL takes as a replication slot name (lowercase letters, digits and _, at most 63 characters), got "${got}". ` +
  `Without wal.slotName the slot is named outbox_<schema>_<tableName>, so those must be identifiers too.`;

export const heldByPause = (destination: string) =>
  `Held because the destination "${destination}" was paused when the WAL relay read it; published from the outbox table, in order, once it is resumed.`;

export const heldBehindDiverted = () =>
  'Held behind an earlier message of its aggregate that the WAL relay moved to the outbox table; published from there, in order.';

export const walCommitNotVisible = (xids: readonly number[], waitedMs: number) =>
  `The WAL relay decoded ${xids.length} commit(s) that wrote the outbox table (transaction ids ${xids.slice(0, 5).join(', ')}${xids.length > 5 ? ', …' : ''}) ` +
  `that the table's reads still did not see after ${waitedMs} ms. PostgreSQL makes a commit visible right after sending it to the stream; ` +
  `a longer wait means the server is overloaded or the stream reads another server than the table (a replica): the stream reads again from its last confirmation.`;
