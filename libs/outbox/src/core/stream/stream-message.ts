import type { ClaimedMessage } from '../outbox-message';

/**
 * A message read from the stream: what a claimed row holds, and where it sits in the stream:
 * the commit that carried it (its end position, which confirming the slot refers to) and its
 * index among that commit's messages.
 */
export interface StreamMessage extends Omit<ClaimedMessage, 'position' | 'attempt' | 'decodeError'> {
  commit: bigint;
  index: number;
  /**
   * The outbox row it was decoded from (`wal.write: 'row'`): its position, and the inserting
   * transaction's id as decoded (32 bits), which a statement on the row must see committed first.
   * Absent for a WAL message.
   */
  row?: { position: string; xid: number };
}

/** One committed transaction's outbox messages, in the order they were written. */
export interface StreamCommit {
  /** End position of the commit record in the WAL (an LSN as a number). */
  lsn: bigint;
  messages: StreamMessage[];
  /**
   * The transaction wrote an outbox row that may hold an aggregate (inserted, or updated to a status
   * other than published): a table-mode writer, a delayed message, a requeue, the stream's own
   * overflow. The stream then asks the table again before publishing what follows.
   */
  wroteTable?: boolean;
  /** The transaction's id as decoded (32 bits), so that a read of the table can check it sees the commit. */
  xid?: number;
  /**
   * The transaction updated an outbox row to a status that holds (a requeue, a retry): its rows'
   * `xmin` may then name this commit while the rows are older, so they are not placed by it.
   */
  updatedRows?: boolean;
  /**
   * Destinations this commit paused (it wrote rows of `<table>_paused`, which the publication
   * carries): the messages committed after it, and in it, to these destinations are held.
   */
  paused?: string[];
}

/** `'16/B374D848'` → 0x16B374D848. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  if (high === undefined || low === undefined) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}
