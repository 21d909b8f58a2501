import { OutboxConfigurationError } from '../../outbox.errors';
import { invalidOption } from '../../outbox.messages';

/** The part of a prom-client `Registry` the outbox uses; any `Registry` instance fits. */
export interface MetricsRegistry {
  getSingleMetric(name: string): unknown;
  removeSingleMetric(name: string): void;
  registerMetric(metric: never): void;
}

export interface OutboxMetricsOptions {
  /**
   * The prom-client registry to register into. Default: prom-client's global `register`, the one
   * `collectDefaultMetrics()` and `@willsoto/nestjs-prometheus` serve by default.
   */
  registry?: MetricsRegistry;
  /** Prefix of every metric name; letters, digits and `_`. Default `'outbox_'`. */
  prefix?: string;
  /** Buckets, in seconds, of the commit → acknowledgement latency histogram. Default {@link DEFAULT_LATENCY_BUCKETS}. */
  latencyBuckets?: number[];
}

/** From 5 ms (the fast path on one host) to 5 min (the longest default backoff). */
export const DEFAULT_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export interface ResolvedMetricsOptions {
  registry?: MetricsRegistry;
  prefix: string;
  latencyBuckets: number[];
}

/** `undefined` when metrics are off; otherwise the options with defaults, or an error naming the bad one. */
export function resolveMetricsOptions(option: unknown): ResolvedMetricsOptions | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { prefix: 'outbox_', latencyBuckets: DEFAULT_LATENCY_BUCKETS };
  if (typeof option !== 'object' || option === null || Array.isArray(option)) fail('metrics', 'true, false or { registry?, prefix?, latencyBuckets? }', option);
  const { registry, prefix = 'outbox_', latencyBuckets = DEFAULT_LATENCY_BUCKETS } = option as OutboxMetricsOptions;
  if (registry !== undefined && (typeof registry?.getSingleMetric !== 'function' || typeof registry?.registerMetric !== 'function')) {
    fail('metrics.registry', 'a prom-client Registry', registry);
  }
  if (typeof prefix !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(prefix)) fail('metrics.prefix', 'letters, digits and _ (e.g. "outbox_")', prefix);
  if (!Array.isArray(latencyBuckets) || latencyBuckets.length === 0 || latencyBuckets.some((b, i) => !(typeof b === 'number' && b > 0 && (i === 0 || b > latencyBuckets[i - 1])))) {
    fail('metrics.latencyBuckets', 'increasing positive numbers of seconds', latencyBuckets);
  }
  return { registry, prefix, latencyBuckets };
}

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}
