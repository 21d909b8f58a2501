import type * as PromClient from 'prom-client';
import type { RelayObserver, SettledBatch } from '../../core/observe/relay-observer';
import { DEFAULT_OUTBOX_NAME } from '../../core/outbox-name';
import type { ResolvedMetricsOptions } from './metrics.options';
import { DESTINATION_LABELS, MESSAGE_LABELS, OutboxMetricSet, type OutboxMetricsSources } from './outbox-metric-set';

export type { OutboxMetricsSources } from './outbox-metric-set';

type Prom = typeof PromClient;

/**
 * One outbox's Prometheus metrics: counters and histograms fed by its relay, gauges read from its
 * stats snapshot at scrape time, all labelled `outbox` with its name. The metrics themselves are
 * shared with the app's other outboxes on the same registry and prefix. `remove()` takes this
 * outbox out (and the metrics out of the registry with the last one, at shutdown).
 */
export class OutboxMetrics implements RelayObserver {
  private readonly set: OutboxMetricSet;

  constructor(prom: Prom, options: ResolvedMetricsOptions, sources: OutboxMetricsSources, private readonly now: () => number = Date.now, private readonly outbox: string = DEFAULT_OUTBOX_NAME) {
    this.set = OutboxMetricSet.join(prom, options, outbox, sources);
  }

  settled(batch: SettledBatch): void {
    const now = this.now();
    // Counted per label set first: prom-client hashes the labels on every call, so one call per
    // label set and batch instead of one per message keeps the cost per message low.
    const { outbox, set } = this;
    const counts = new Map<string, { labels: Record<(typeof MESSAGE_LABELS)[number], string>; published: number; failed: number; dead: number }>();
    const latencies = new Map<string, { labels: Record<(typeof DESTINATION_LABELS)[number], string>; seconds: number[] }>();
    const durations = new Map<string, { seconds: number; ok: boolean }>();
    const streaks = new Map<string, { labels: Record<(typeof DESTINATION_LABELS)[number], string>; failed: number; published: boolean }>();
    for (const { message, error, retryInMs, durationMs } of batch.outcomes) {
      const { transport, destination, type } = message;
      const key = `${transport}\u0000${destination}\u0000${type}`;
      let count = counts.get(key);
      if (!count) counts.set(key, (count = { labels: { outbox, transport, destination, event_type: type }, published: 0, failed: 0, dead: 0 }));
      const where = `${transport}\u0000${destination}`;
      let streak = streaks.get(where);
      if (!streak) streaks.set(where, (streak = { labels: { outbox, transport, destination }, failed: 0, published: false }));
      if (error === undefined) {
        count.published++;
        streak.published = true;
        let latency = latencies.get(where);
        if (!latency) latencies.set(where, (latency = { labels: { outbox, transport, destination }, seconds: [] }));
        latency.seconds.push(Math.max(0, now - Date.parse(message.occurredAt)) / 1000);
      } else {
        count.failed++;
        streak.failed++;
        if (retryInMs === null) count.dead++;
      }
      // One observation per transport group: its messages went out together.
      const group = durations.get(transport) ?? { seconds: durationMs / 1000, ok: true };
      group.ok &&= error === undefined;
      durations.set(transport, group);
    }
    for (const { labels, published, failed, dead } of counts.values()) {
      if (published > 0) set.published.inc(labels, published);
      if (failed > 0) set.failures.inc(labels, failed);
      if (dead > 0) set.dead.inc(labels, dead);
    }
    for (const { labels, seconds } of latencies.values()) {
      const child = set.latency.labels(labels);
      for (const value of seconds) child.observe(value);
    }
    // The messages of a batch go out together: one acknowledged publish means the destination takes messages.
    for (const { labels, failed, published } of streaks.values()) {
      if (published) set.consecutiveFailures.set(labels, 0);
      else set.consecutiveFailures.inc(labels, failed);
    }
    for (const [transport, { seconds, ok }] of durations) set.duration.observe({ outbox, transport, outcome: ok ? 'ok' : 'error' }, seconds);
    if (batch.leaseLost.published > 0) set.leaseLost.inc({ outbox, outcome: 'published' }, batch.leaseLost.published);
    if (batch.leaseLost.failed > 0) set.leaseLost.inc({ outbox, outcome: 'failed' }, batch.leaseLost.failed);
  }

  remove(): void {
    this.set.leave(this.outbox);
  }
}
