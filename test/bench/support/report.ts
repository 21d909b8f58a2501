import type { BenchServices } from './env';

export interface Sizes {
  name: 'quick' | 'full';
  /** P1 and P4 backlog. */
  drainRows: number;
  /** P1's start: events pending when a relaying app is created. */
  startRows: number;
  /** P1: wall-clock cap for the contenders that cannot drain the backlog in reasonable time. */
  slowContenderCapMs: number;
  /** P1: rounds of the fast contenders (median reported). */
  rounds: number;
  /** P2: sequential saves per variant, and seconds per variant of the 8-writer phase. */
  sequentialSaves: number;
  concurrentSeconds: number;
  /** P3: offered load and duration. */
  offeredPerSecond: number;
  latencySeconds: number;
  /** P5: backlog (0 = skipped). */
  memoryRows: number;
  /** P6: measurement window. */
  idleSeconds: number;
  /** P8: rows per key distribution. */
  skewRows: number;
  /** P9: rows of the burst backlog (over 50 aggregates). */
  burstRows: number;
  /** P10: published rows kept in each table, the pending rows claimed, and the cap on one table's cleanup. */
  partitionRows: number;
  partitionPending: number;
  partitionCleanupCapMs: number;
}

export const QUICK: Sizes = {
  name: 'quick',
  drainRows: 20_000,
  startRows: 2_000,
  slowContenderCapMs: 12_000,
  rounds: 2,
  sequentialSaves: 1_000,
  concurrentSeconds: 4,
  offeredPerSecond: 500,
  latencySeconds: 10,
  memoryRows: 0,
  idleSeconds: 20,
  skewRows: 3_000,
  burstRows: 5_000,
  partitionRows: 500_000,
  partitionPending: 10_000,
  partitionCleanupCapMs: 60_000,
};

export const FULL: Sizes = {
  name: 'full',
  drainRows: 100_000,
  startRows: 10_000,
  slowContenderCapMs: 45_000,
  rounds: 2,
  sequentialSaves: 3_000,
  concurrentSeconds: 10,
  offeredPerSecond: 500,
  latencySeconds: 30,
  memoryRows: 1_000_000,
  idleSeconds: 30,
  skewRows: 20_000,
  burstRows: 20_000,
  partitionRows: 10_000_000,
  partitionPending: 50_000,
  partitionCleanupCapMs: 900_000,
};

export interface BenchContext {
  services: BenchServices;
  sizes: Sizes;
  log(message: string): void;
}

/** One line of the summary table: a figure, the aim it is held against, and whether it met it. */
export interface SummaryRow {
  bench: string;
  figure: string;
  value: string;
  aim?: string;
  met?: boolean;
}

export interface Section {
  id: string;
  title: string;
  /** Markdown lines: tables and notes. */
  body: string[];
  summary: SummaryRow[];
}

export function table(header: string[], rows: string[][]): string[] {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
}

export const verdict = (met: boolean | undefined) => (met === undefined ? '' : met ? 'yes' : '**no**');
