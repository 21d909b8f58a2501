/** Settings handed to the child processes, and the messages they send back over the IPC channel. */

export interface RelaySettings {
  relayId: string;
  postgresUrl: string;
  schema: string;
  brokers: string[];
  topic: string;
  batchSize: number;
  /** Claimed batches a relay may have unsettled at once (the relay's maxBatchesInFlight). */
  maxBatchesInFlight: number;
  leaseMs: number;
  publishTimeoutMs: number;
  pollIntervalMs: number;
  /** Share of messages whose publish fails on purpose before reaching Kafka (0..1). */
  errorRate: number;
  /** The outbox module's delivery mode; `slotName` is the WAL mode's slot, `walWrite` its `wal.write`. */
  delivery: ChaosDelivery;
  slotName: string;
  walWrite: ChaosWalWrite;
}

export type ChaosWalWrite = 'row' | 'message';

export type ChaosDelivery = 'table' | 'wal';

/**
 * Batch numbers from here up name a publish of the WAL stream (the relay's n-th, counted from this
 * base) rather than a claim of the table relay: the stream has no claims, and its publishes are
 * settled by confirming the slot, which the run learns from the server's replay positions.
 */
export const STREAM_BATCH_BASE = 1_000_000;

export interface WriterSettings {
  postgresUrl: string;
  schema: string;
  topic: string;
  durationMs: number;
  /** Business operations started per second (place, pay, cancel). */
  opsPerSecond: number;
  /** At most this many transactions in flight. */
  concurrency: number;
  /** Share of transactions that throw after saving, so that they roll back (0..1). */
  rollbackRate: number;
  /** JSON lines, one per operation. */
  ledgerFile: string;
  seed: number;
  delivery: ChaosDelivery;
  slotName: string;
  walWrite: ChaosWalWrite;
}

/** Headers the chaos transport adds to every record, so that the ledger knows which send produced it. */
export const RELAY_HEADER = 'chaos-relay';
export const BATCH_HEADER = 'chaos-batch';

export type RelayReport =
  | { t: 'ready'; relayId: string }
  /** Sent just before a batch goes to Kafka. */
  | { t: 'sending'; relayId: string; batch: number; size: number; injected: number; ids: string[] }
  /** The outcome of that batch as the transport saw it. */
  | { t: 'sent'; relayId: string; batch: number; size: number; ok: number; failed: number; late: boolean; elapsedMs: number; error?: string }
  /** The relay recorded every outcome of the batch in the database: from here it cannot cause a duplicate. */
  | { t: 'settled'; relayId: string; batch: number }
  /** What the relay itself logged about a batch it could not settle as its own. */
  | { t: 'incident'; relayId: string; batch: number; kind: 'settle-failed' | 'lease-overrun'; rows: number; text: string };

export type WriterOp = 'place' | 'pay' | 'cancel';
export type WriterOutcome = 'committed' | 'rolled-back' | 'failed' | 'uncertain';

export interface WriterRecord {
  seq: number;
  orderId: string;
  op: WriterOp;
  outcome: WriterOutcome;
  at: number;
  error?: string;
}

export type WriterReport = { t: 'ready' } | { t: 'done'; counts: Record<WriterOutcome, number>; ops: number };

export const EVENT_TYPE: Record<WriterOp, string> = {
  place: 'orders.order-placed',
  pay: 'orders.order-paid',
  cancel: 'orders.order-cancelled',
};

/** A small deterministic PRNG (mulberry32) so that a run can be replayed with --seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
