import { randomBytes } from 'node:crypto';
import type { ChaosDelivery, ChaosWalWrite } from './chaos.protocol';

export type PostgresStopMode = 'fast' | 'immediate';

// The size and the faults of a chaos run: the default profile, --full, and the command line's overrides.
export interface Profile {
  name: string;
  /**
   * The outbox module's delivery mode: 'table' (the relays claim rows) or 'wal' (the writer puts its
   * events in the WAL; one relay streams the slot, the others stand by, and every relay publishes
   * the rows the stream moved to the table).
   */
  delivery: ChaosDelivery;
  /** With delivery 'wal': what the writer writes (`wal.write`), a stream-owned row or a WAL message. */
  walWrite: ChaosWalWrite;
  relays: number;
  writeSeconds: number;
  opsPerSecond: number;
  concurrency: number;
  rollbackRate: number;
  errorRate: number;
  batchSize: number;
  /** Batches each relay may have claimed and not yet settled (pipelining); every kill or stall may leave this many unsettled. */
  maxBatchesInFlight: number;
  leaseMs: number;
  publishTimeoutMs: number;
  pollIntervalMs: number;
  kills: number;
  /** Start of each stall as a fraction of the write phase; each lasts stallMs. */
  stalls: number[];
  stallMs: number;
  /** Start of each broker outage as a fraction of the write phase. */
  brokerOutages: number[];
  brokerOutageMs: number;
  /**
   * PostgreSQL restarts: when, as a fraction of the write phase, and how it stops: `fast` (sessions
   * ended, shutdown checkpoint) or `immediate` (a crash: no checkpoint, recovery at start).
   */
  postgresRestarts: Array<{ at: number; mode: PostgresStopMode }>;
  postgresDownMs: number;
  drainTimeoutMs: number;
}

const DEFAULT: Profile = {
  name: 'default',
  delivery: 'table',
  walWrite: 'row',
  relays: 4,
  writeSeconds: 140,
  opsPerSecond: 40,
  concurrency: 6,
  rollbackRate: 0.1,
  errorRate: 0.05,
  batchSize: 20,
  maxBatchesInFlight: 2,
  leaseMs: 3_000,
  publishTimeoutMs: 1_000,
  pollIntervalMs: 250,
  kills: 24,
  stalls: [0.08, 0.56, 0.86],
  stallMs: 8_000,
  brokerOutages: [0.2],
  brokerOutageMs: 32_000,
  postgresRestarts: [
    { at: 0.42, mode: 'immediate' },
    { at: 0.74, mode: 'fast' },
  ],
  postgresDownMs: 3_000,
  drainTimeoutMs: 120_000,
};

const FULL: Profile = {
  ...DEFAULT,
  name: 'full',
  relays: 6,
  writeSeconds: 420,
  opsPerSecond: 50,
  kills: 90,
  stalls: [0.04, 0.09, 0.3, 0.42, 0.55, 0.72, 0.8, 0.93],
  brokerOutages: [0.14, 0.6],
  brokerOutageMs: 40_000,
  postgresRestarts: [
    { at: 0.35, mode: 'fast' },
    { at: 0.5, mode: 'immediate' },
    { at: 0.66, mode: 'immediate' },
    { at: 0.88, mode: 'fast' },
  ],
  drainTimeoutMs: 240_000,
};

export function parseArguments(argv: string[]): Profile & { seed: number; selfTest: string[] } {
  let profile: Profile = { ...DEFAULT };
  const overrides: Partial<Record<keyof Profile, number>> = {};
  let seed = randomBytes(4).readUInt32LE(0);
  for (const argument of argv) {
    const [name, value] = argument.replace(/^--/, '').split('=');
    if (name === 'full') profile = { ...FULL, delivery: profile.delivery, walWrite: profile.walWrite };
    else if (name === 'delivery' && (value === 'table' || value === 'wal')) profile.delivery = value;
    else if (name === 'wal-write' && (value === 'row' || value === 'message')) profile.walWrite = value;
    else if (name === 'seed') seed = Number(value);
    else if (['relays', 'kills', 'writeSeconds', 'opsPerSecond', 'batchSize', 'maxBatchesInFlight', 'leaseMs'].includes(name) && value !== undefined && Number.isFinite(Number(value))) {
      overrides[name as keyof Profile] = Number(value);
    } else if (name === 'duration' && Number.isFinite(Number(value))) overrides.writeSeconds = Number(value);
    else if (name === 'help' || name === 'h') {
      console.log('usage: npm run chaos [-- --delivery=table|wal] [--wal-write=row|message] [--full] [--seed=N] [--duration=SECONDS] [--relays=N] [--kills=N] [--opsPerSecond=N] [--batchSize=N] [--maxBatchesInFlight=N]');
      console.log('       CHAOS_SELF_TEST=drop|ghost|reorder|dup|inbox (comma-separated) corrupts the ledger, or bypasses the inbox, on purpose: the run must then fail.');
      process.exit(0);
    } else throw new Error(`unknown argument ${argument} (try --help)`);
  }
  const selfTest = (process.env.CHAOS_SELF_TEST ?? '').split(',').map((mode) => mode.trim()).filter(Boolean);
  for (const mode of selfTest) if (!['drop', 'ghost', 'reorder', 'dup', 'inbox'].includes(mode)) throw new Error(`CHAOS_SELF_TEST: unknown mode ${mode} (drop, ghost, reorder, dup, inbox)`);
  return { ...profile, ...overrides, seed, selfTest } as Profile & { seed: number; selfTest: string[] };
}
