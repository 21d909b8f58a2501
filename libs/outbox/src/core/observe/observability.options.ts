import { OutboxConfigurationError } from '../outbox.errors';
import { conflictingOptions, invalidOption } from '../outbox.messages';

export interface StatsOptions {
  /**
   * Milliseconds a stats snapshot is served from memory before the next read queries the table
   * again. Metrics scrapes, health probes and `OutboxStats` share it. Default `5000`.
   */
  refreshIntervalMs?: number;
}

/** When `OutboxHealthIndicator` reports the outbox down. A `null` threshold is not checked. */
export interface HealthThresholds {
  /** Down when the oldest pending row is older than this many milliseconds. Default `300000` (5 min). */
  maxLagMs?: number | null;
  /** Down when more rows than this are dead. Default `null` (dead rows alert, but do not make the instance unhealthy). */
  maxDeadRows?: number | null;
  /**
   * Down when rows are pending and this instance's relay has not finished a round for this many
   * milliseconds (a stalled relay). Must be longer than `pollIntervalMs` and `publishTimeoutMs`.
   * Default `60000`, or three times the longer of those two when that is more.
   */
  maxRoundAgeMs?: number | null;
}

export const OBSERVABILITY_DEFAULTS = {
  stats: { refreshIntervalMs: 5_000 },
  health: { maxLagMs: 300_000, maxDeadRows: null, maxRoundAgeMs: 60_000 },
} as const;

export interface ResolvedObservability {
  stats: Required<StatsOptions>;
  health: Required<HealthThresholds>;
}

/** Applies the defaults of `stats` and `health` and rejects values that cannot work, naming the option. */
export function resolveObservability(
  options: { stats?: StatsOptions; health?: HealthThresholds },
  relay: { pollIntervalMs: number; publishTimeoutMs: number },
): ResolvedObservability {
  for (const group of ['stats', 'health'] as const) {
    const value = options[group];
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) fail(group, 'an object', value);
  }
  const roundAge = Math.max(OBSERVABILITY_DEFAULTS.health.maxRoundAgeMs, 3 * Math.max(relay.pollIntervalMs, relay.publishTimeoutMs));
  const resolved: ResolvedObservability = {
    stats: { ...OBSERVABILITY_DEFAULTS.stats, ...defined(options.stats) },
    health: { ...OBSERVABILITY_DEFAULTS.health, maxRoundAgeMs: roundAge, ...defined(options.health) },
  };
  positiveInteger('stats.refreshIntervalMs', resolved.stats.refreshIntervalMs, OBSERVABILITY_LIMITS.refreshIntervalMs);
  const { maxLagMs, maxDeadRows, maxRoundAgeMs } = resolved.health;
  if (maxLagMs !== null) positiveInteger('health.maxLagMs', maxLagMs, OBSERVABILITY_LIMITS.thresholdMs);
  if (maxDeadRows !== null && (!Number.isSafeInteger(maxDeadRows) || maxDeadRows < 0)) fail('health.maxDeadRows', 'an integer of 0 or more, or null', maxDeadRows);
  if (maxRoundAgeMs !== null) {
    positiveInteger('health.maxRoundAgeMs', maxRoundAgeMs, OBSERVABILITY_LIMITS.thresholdMs);
    for (const option of ['pollIntervalMs', 'publishTimeoutMs'] as const) {
      if (maxRoundAgeMs <= relay[option]) {
        throw new OutboxConfigurationError(
          conflictingOptions(
            'health.maxRoundAgeMs',
            option,
            `a healthy relay may go ${relay[option]} ms between rounds, so ${maxRoundAgeMs} ms would report it stalled; make health.maxRoundAgeMs larger`,
          ),
        );
      }
    }
  }
  return resolved;
}

/** An option set to `undefined` means its default, as when it is left out. */
function defined<T extends object>(options: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(options ?? {}).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Upper bounds, like `OUTBOX_LIMITS`: a cache older than an hour or a threshold of a month helps nobody. */
export const OBSERVABILITY_LIMITS = {
  refreshIntervalMs: 3_600_000,
  thresholdMs: 30 * 86_400_000,
} as const;

function positiveInteger(option: string, value: unknown, max: number): void {
  if (!Number.isSafeInteger(value) || (value as number) <= 0 || (value as number) > max) fail(option, `an integer from 1 to ${max}`, value);
}

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}
