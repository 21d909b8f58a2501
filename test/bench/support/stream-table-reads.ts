import { StreamRelay } from '../../../libs/outbox/src/core/stream/stream-relay';
import { TableOverflow } from '../../../libs/outbox/src/wal/table-overflow';

/**
 * Counts, in this process, the WAL stream's batches (its check of each batch against the table)
 * and its reads of the outbox table (TableOverflow's backlog and held-set queries), by wrapping
 * those methods once. Reset `batches` and `reads` before a run.
 */
export const streamTableReads = { batches: 0, reads: 0 };

let installed = false;
export function countStreamTableReads(): typeof streamTableReads {
  if (installed) return streamTableReads;
  installed = true;
  wrap(TableOverflow.prototype, 'backlogged', () => streamTableReads.reads++);
  wrap(TableOverflow.prototype, 'held', () => streamTableReads.reads++);
  wrap(StreamRelay.prototype, 'heldBehindTable', () => streamTableReads.batches++);
  return streamTableReads;
}

function wrap(prototype: object, method: string, onCall: () => void): void {
  const target = prototype as Record<string, unknown>;
  const original = target[method];
  // Code before the held set had no `held` method: nothing to count there.
  if (typeof original !== 'function') return;
  target[method] = function (this: unknown, ...args: unknown[]) {
    onCall();
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
}
