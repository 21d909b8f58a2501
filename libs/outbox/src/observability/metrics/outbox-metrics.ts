import type * as PromClient from 'prom-client';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { metricAlreadyRegistered } from '../../core/outbox.messages';
import type { RelayObserver, SettledBatch } from '../../core/observe/relay-observer';
import type { OutboxStatsSnapshot, RelayActivity } from '../../core/stats/outbox-stats';
import type { ResolvedMetricsOptions } from './metrics.options';
import { pausedDestinationsGauge } from './paused-destinations.gauge';

type Prom = typeof PromClient;

export interface OutboxMetricsSources {
  /** Cached stats: every gauge of one scrape shares one read. */
  stats: () => Promise<OutboxStatsSnapshot>;
  activity: () => RelayActivity;
}

// Labels are bounded: transport and destination come from configuration, event_type from code. No ids.
const MESSAGE_LABELS = ['transport', 'destination', 'event_type'] as const;
const DESTINATION_LABELS = ['transport', 'destination'] as const;

/**
 * The outbox's Prometheus metrics: counters and histograms fed by the relay, gauges read from
 * the stats snapshot at scrape time. `remove()` takes them out of the registry again (shutdown).
 */
export class OutboxMetrics implements RelayObserver {
  private readonly registry: PromClient.Registry;
  private readonly names: string[] = [];
  private readonly published: PromClient.Counter<(typeof MESSAGE_LABELS)[number]>;
  private readonly failures: PromClient.Counter<(typeof MESSAGE_LABELS)[number]>;
  private readonly dead: PromClient.Counter<(typeof MESSAGE_LABELS)[number]>;
  private readonly leaseLost: PromClient.Counter<'outcome'>;
  private readonly latency: PromClient.Histogram<(typeof DESTINATION_LABELS)[number]>;
  private readonly duration: PromClient.Histogram<'transport' | 'outcome'>;
  private readonly statsErrors: PromClient.Counter;
  private readonly consecutiveFailures: PromClient.Gauge<(typeof DESTINATION_LABELS)[number]>;
  /** Destinations seen once keep a series (at 0) after their rows are gone, instead of vanishing. */
  private readonly seen = new Map<string, Record<(typeof DESTINATION_LABELS)[number], string>>();

  constructor(prom: Prom, options: ResolvedMetricsOptions, sources: OutboxMetricsSources, private readonly now: () => number = Date.now) {
    this.registry = (options.registry as unknown as PromClient.Registry | undefined) ?? prom.register;
    const p = options.prefix;
    const names = [
      'messages_published_total', 'publish_failures_total', 'messages_dead_total', 'lease_lost_total', 'commit_to_ack_seconds',
      'publish_duration_seconds', 'stats_errors_total', 'publish_consecutive_failures', 'pending_messages', 'in_flight_messages', 'retrying_messages',
      'dead_messages', 'oldest_pending_age_seconds', 'relay_up', 'relay_last_round_timestamp_seconds', 'destination_paused',
    ].map((name) => p + name);
    // Checked before registering anything, so a clash leaves the registry as it was.
    for (const name of names) if (this.registry.getSingleMetric(name)) throw new OutboxConfigurationError(metricAlreadyRegistered(name));

    const registers = [this.registry];
    const track = <T>(name: string, metric: T): T => (this.names.push(name), metric);
    this.published = track(p + 'messages_published_total', new prom.Counter({
      name: p + 'messages_published_total', help: 'Messages the broker acknowledged and the relay marked published.', labelNames: MESSAGE_LABELS, registers,
    }));
    this.failures = track(p + 'publish_failures_total', new prom.Counter({
      name: p + 'publish_failures_total', help: 'Failed publish attempts (each is retried until the row is dead).', labelNames: MESSAGE_LABELS, registers,
    }));
    this.dead = track(p + 'messages_dead_total', new prom.Counter({
      name: p + 'messages_dead_total', help: 'Messages that used up their attempts and became dead.', labelNames: MESSAGE_LABELS, registers,
    }));
    this.leaseLost = track(p + 'lease_lost_total', new prom.Counter({
      name: p + 'lease_lost_total', help: 'Outcomes not recorded because the lease had expired and another relay held the row.', labelNames: ['outcome'], registers,
    }));
    this.latency = track(p + 'commit_to_ack_seconds', new prom.Histogram({
      name: p + 'commit_to_ack_seconds', help: 'From the event being recorded (just before commit) to the broker acknowledgement being recorded.',
      labelNames: DESTINATION_LABELS, buckets: options.latencyBuckets, registers,
    }));
    this.duration = track(p + 'publish_duration_seconds', new prom.Histogram({
      name: p + 'publish_duration_seconds', help: 'Time a transport took to publish a group of messages and get the acknowledgement.',
      labelNames: ['transport', 'outcome'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    }));
    this.statsErrors = track(p + 'stats_errors_total', new prom.Counter({
      name: p + 'stats_errors_total', help: 'Scrapes whose stats query failed; gauges then keep their previous values.', registers,
    }));
    // A gauge, not a counter: it has a value from the first failed attempt of a fresh process on,
    // where a counter series born at its first failure shows no increase to rate() or increase().
    this.consecutiveFailures = track(p + 'publish_consecutive_failures', new prom.Gauge({
      name: p + 'publish_consecutive_failures', help: 'Publish attempts to this destination that failed since its last acknowledged publish on this instance.',
      labelNames: DESTINATION_LABELS, registers,
    }));

    let update: Promise<OutboxStatsSnapshot | undefined> | undefined;
    // One stats read per scrape at most (and one per refresh interval across scrapes, by the reader's cache).
    const snapshot = () => {
      update ??= sources.stats().then(
        (read) => read,
        () => (this.statsErrors.inc(), undefined),
      ).finally(() => setImmediate(() => (update = undefined)));
      return update;
    };
    const destinationGauge = (name: string, help: string, pick: (row: OutboxStatsSnapshot['destinations'][number]) => number | null) =>
      track(p + name, new prom.Gauge({
        name: p + name, help, labelNames: DESTINATION_LABELS, registers,
        collect: async function (this: PromClient.Gauge<(typeof DESTINATION_LABELS)[number]>) {
          const read = await snapshot();
          if (!read) return;
          const values = new Map(read.destinations.map((row) => [key(row), row]));
          for (const row of read.destinations) seen.set(key(row), { transport: row.transport, destination: row.destination });
          for (const [id, labels] of seen) {
            const row = values.get(id);
            this.set(labels, row ? (pick(row) ?? 0) : 0);
          }
        },
      }));
    const seen = this.seen;
    destinationGauge('pending_messages', 'Rows not yet acknowledged by the broker (in flight and retrying included).', (row) => row.pending);
    destinationGauge('in_flight_messages', 'Pending rows a relay is publishing now (held under a live lease).', (row) => row.inFlight);
    destinationGauge('retrying_messages', 'Pending rows that failed and wait for their next attempt.', (row) => row.retrying);
    destinationGauge('dead_messages', 'Dead rows waiting for an operator (requeue or discard).', (row) => row.dead);
    destinationGauge('oldest_pending_age_seconds', 'Age of the oldest pending row (the lag); 0 when nothing is pending.', (row) =>
      row.oldestPendingAgeMs === null ? 0 : row.oldestPendingAgeMs / 1000,
    );
    track(p + 'destination_paused', pausedDestinationsGauge(prom, p + 'destination_paused', registers, snapshot));
    track(p + 'relay_up', new prom.Gauge({
      name: p + 'relay_up', help: '1 when this instance runs a relay, else 0.', registers,
      collect() {
        this.set(sources.activity().running ? 1 : 0);
      },
    }));
    track(p + 'relay_last_round_timestamp_seconds', new prom.Gauge({
      name: p + 'relay_last_round_timestamp_seconds', help: "Unix time this instance's relay last finished a claim → publish → settle round (liveness); rounds whose claim or settle failed do not count.", registers,
      collect() {
        const at = sources.activity().lastRoundAt;
        this.set(at ? at.getTime() / 1000 : 0);
      },
    }));
  }

  settled(batch: SettledBatch): void {
    const now = this.now();
    // Counted per label set first: prom-client hashes the labels on every call, so one call per
    // label set and batch instead of one per message keeps the cost per message low.
    const counts = new Map<string, { labels: Record<(typeof MESSAGE_LABELS)[number], string>; published: number; failed: number; dead: number }>();
    const latencies = new Map<string, { labels: Record<(typeof DESTINATION_LABELS)[number], string>; seconds: number[] }>();
    const durations = new Map<string, { seconds: number; ok: boolean }>();
    const streaks = new Map<string, { labels: Record<(typeof DESTINATION_LABELS)[number], string>; failed: number; published: boolean }>();
    for (const { message, error, retryInMs, durationMs } of batch.outcomes) {
      const { transport, destination, type } = message;
      const key = `${transport}\u0000${destination}\u0000${type}`;
      let count = counts.get(key);
      if (!count) counts.set(key, (count = { labels: { transport, destination, event_type: type }, published: 0, failed: 0, dead: 0 }));
      const where = `${transport}\u0000${destination}`;
      let streak = streaks.get(where);
      if (!streak) streaks.set(where, (streak = { labels: { transport, destination }, failed: 0, published: false }));
      if (error === undefined) {
        count.published++;
        streak.published = true;
        let latency = latencies.get(where);
        if (!latency) latencies.set(where, (latency = { labels: { transport, destination }, seconds: [] }));
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
      if (published > 0) this.published.inc(labels, published);
      if (failed > 0) this.failures.inc(labels, failed);
      if (dead > 0) this.dead.inc(labels, dead);
    }
    for (const { labels, seconds } of latencies.values()) {
      const child = this.latency.labels(labels);
      for (const value of seconds) child.observe(value);
    }
    // The messages of a batch go out together: one acknowledged publish means the destination takes messages.
    for (const { labels, failed, published } of streaks.values()) {
      if (published) this.consecutiveFailures.set(labels, 0);
      else this.consecutiveFailures.inc(labels, failed);
    }
    for (const [transport, { seconds, ok }] of durations) this.duration.observe({ transport, outcome: ok ? 'ok' : 'error' }, seconds);
    if (batch.leaseLost.published > 0) this.leaseLost.inc({ outcome: 'published' }, batch.leaseLost.published);
    if (batch.leaseLost.failed > 0) this.leaseLost.inc({ outcome: 'failed' }, batch.leaseLost.failed);
  }

  remove(): void {
    for (const name of this.names) this.registry.removeSingleMetric(name);
    this.names.length = 0;
  }
}

function key(row: { transport: string; destination: string }): string {
  return `${row.transport}\u0000${row.destination}`;
}
