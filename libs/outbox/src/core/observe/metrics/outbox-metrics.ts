import type * as PromClient from 'prom-client';
import type { RelayObserver, SettledBatch } from '../relay-observer';
import { DEFAULT_OUTBOX_NAME } from '../../outbox-name';
import type { ResolvedMetricsOptions } from './metrics.options';
import { DESTINATION_LABELS, MESSAGE_LABELS, OutboxMetricSet, type MemberLabels, type OutboxMetricsSources } from './outbox-metric-set';

export type { OutboxMetricsSources } from './outbox-metric-set';

type Prom = typeof PromClient;
type Labels<L extends string> = Partial<Record<L, string>>;

/**
 * One outbox's Prometheus metrics: counters and histograms fed by its relay, gauges read from its
 * stats snapshot at scrape time, all labelled `outbox` with its name (and `tenant` with the tenant's
 * id, for one of `OutboxTenantsModule`'s outboxes). The metrics themselves are
 * shared with the app's other outboxes on the same registry and prefix. `remove()` takes this
 * outbox out (and the metrics out of the registry with the last one, at shutdown).
 */
export class OutboxMetrics implements RelayObserver {
  private readonly set: OutboxMetricSet;
  private readonly member: MemberLabels;

  constructor(prom: Prom, options: ResolvedMetricsOptions, sources: OutboxMetricsSources, private readonly now: () => number = Date.now, outbox: string = DEFAULT_OUTBOX_NAME, tenant?: string) {
    this.member = tenant === undefined ? { outbox } : { outbox, tenant };
    this.set = OutboxMetricSet.join(prom, options, this.member, sources);
  }

  settled(batch: SettledBatch): void {
    const now = this.now();
    // Counted per label set first: prom-client hashes the labels on every call, so one call per
    // label set and batch instead of one per message keeps the cost per message low.
    const { member, set } = this;
    const counts = new Map<string, { labels: Labels<(typeof MESSAGE_LABELS)[number]>; published: number; failed: number; dead: number }>();
    const latencies = new Map<string, { labels: Labels<(typeof DESTINATION_LABELS)[number]>; seconds: number[] }>();
    const durations = new Map<string, { seconds: number; ok: boolean }>();
    const streaks = new Map<string, { labels: Labels<(typeof DESTINATION_LABELS)[number]>; failed: number; published: boolean }>();
    for (const { message, error, retryInMs, durationMs } of batch.outcomes) {
      const { transport, destination, type } = message;
      const key = `${transport}\u0000${destination}\u0000${type}`;
      let count = counts.get(key);
      if (!count) counts.set(key, (count = { labels: { ...member, transport, destination, event_type: type }, published: 0, failed: 0, dead: 0 }));
      const where = `${transport}\u0000${destination}`;
      let streak = streaks.get(where);
      if (!streak) streaks.set(where, (streak = { labels: { ...member, transport, destination }, failed: 0, published: false }));
      if (error === undefined) {
        count.published++;
        streak.published = true;
        let latency = latencies.get(where);
        if (!latency) latencies.set(where, (latency = { labels: { ...member, transport, destination }, seconds: [] }));
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
    // Each series written is noted (once per label set), so that a tenant's outbox removed at run time takes its series along.
    const wrote = (metric: Parameters<OutboxMetricSet['wrote']>[1], labels: Parameters<OutboxMetricSet['wrote']>[2]) => set.wrote(member, metric, labels);
    for (const { labels, published, failed, dead } of counts.values()) {
      if (published > 0) (set.published.inc(labels, published), wrote(set.published, labels));
      if (failed > 0) (set.failures.inc(labels, failed), wrote(set.failures, labels));
      if (dead > 0) (set.dead.inc(labels, dead), wrote(set.dead, labels));
    }
    for (const { labels, seconds } of latencies.values()) {
      const child = set.latency.labels(labels);
      for (const value of seconds) child.observe(value);
      wrote(set.latency, labels);
    }
    // The messages of a batch go out together: one acknowledged publish means the destination takes messages.
    for (const { labels, failed, published } of streaks.values()) {
      if (published) set.consecutiveFailures.set(labels, 0);
      else set.consecutiveFailures.inc(labels, failed);
      wrote(set.consecutiveFailures, labels);
    }
    for (const [transport, { seconds, ok }] of durations) {
      const labels = { ...member, transport, outcome: ok ? 'ok' : 'error' };
      set.duration.observe(labels, seconds);
      wrote(set.duration, labels);
    }
    for (const outcome of ['published', 'failed'] as const) {
      if (batch.leaseLost[outcome] === 0) continue;
      set.leaseLost.inc({ ...member, outcome }, batch.leaseLost[outcome]);
      wrote(set.leaseLost, { ...member, outcome });
    }
  }

  remove(): void {
    this.set.leave(this.member);
  }
}
