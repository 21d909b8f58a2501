import { OutboxConfigurationError } from '../outbox.errors';
import { invalidOption } from '../outbox.messages';

/** The span of one partition of a partitioned outbox table. */
export type PartitionInterval = 'day' | 'hour';

/**
 * PostgreSQL only, table delivery only: the outbox table is partitioned by `created_at`, one
 * partition per day or hour (UTC), plus a DEFAULT partition that takes any row no partition covers.
 * Cleanup then drops whole partitions instead of deleting rows one batch at a time.
 */
export interface OutboxPartitioning {
  /** The span of one partition: `'day'` or `'hour'` (UTC). Required. */
  interval: PartitionInterval;
  /**
   * Partitions made ahead of the current one, by the migration and by every cleanup run. Rows past
   * them land in the DEFAULT partition (never lost, cleaned row by row). Default `3` (days) or `24` (hours).
   */
  ahead?: number;
}

export type ResolvedPartitioning = Required<OutboxPartitioning>;

export const PARTITIONING_DEFAULTS = { ahead: { day: 3, hour: 24 } } as const;
/** At most a year of days or a month of hours made ahead: each partition is a table. */
const MAX_AHEAD = { day: 366, hour: 744 } as const;
const INTERVAL_MS: Record<PartitionInterval, number> = { day: 86_400_000, hour: 3_600_000 };

/** Applies the default and refuses what cannot work, naming the option (`partitioning` unless told otherwise). */
export function resolvePartitioning(value: unknown, option = 'partitioning'): ResolvedPartitioning {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(option, `an object { interval: 'day' | 'hour', ahead? }`, value);
  const { interval, ahead, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) fail(`${option}.${unknown}`, 'no such option (known: interval, ahead)', rest[unknown]);
  if (interval !== 'day' && interval !== 'hour') fail(`${option}.interval`, `'day' or 'hour'`, interval);
  const resolvedAhead = ahead ?? PARTITIONING_DEFAULTS.ahead[interval];
  if (!Number.isSafeInteger(resolvedAhead) || (resolvedAhead as number) < 1 || (resolvedAhead as number) > MAX_AHEAD[interval]) {
    fail(`${option}.ahead`, `an integer from 1 to ${MAX_AHEAD[interval]} (partitions of one ${interval})`, ahead);
  }
  return { interval, ahead: resolvedAhead as number };
}

/** One partition's range, `[from, to)` in UTC, and the suffix of its table's name. */
export interface PartitionRange {
  from: Date;
  to: Date;
  /** `p20261126` (day) or `p2026112613` (hour). */
  suffix: string;
}

/** The partition holding `at`, and `ahead` more after it. */
export function partitionsFrom(at: Date, partitioning: ResolvedPartitioning): PartitionRange[] {
  const start = floorTo(at, partitioning.interval);
  return Array.from({ length: partitioning.ahead + 1 }, (_, index) => rangeAt(start + index * INTERVAL_MS[partitioning.interval], partitioning.interval));
}

/** The start of the interval holding `at`, in UTC milliseconds. */
export function floorTo(at: Date, interval: PartitionInterval): number {
  return Math.floor(at.getTime() / INTERVAL_MS[interval]) * INTERVAL_MS[interval];
}

function rangeAt(startMs: number, interval: PartitionInterval): PartitionRange {
  const from = new Date(startMs);
  const stamp = from.toISOString().replace(/\D/g, '');
  return { from, to: new Date(startMs + INTERVAL_MS[interval]), suffix: `p${stamp.slice(0, interval === 'day' ? 8 : 10)}` };
}

/** The longest suffix a partition's name gets (`_p2026112613`, `_default`): the table's name must leave room for it in 63 characters. */
export const PARTITION_SUFFIX_LENGTH = 12;

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}
