import type * as PromClient from 'prom-client';
import { OutboxConfigurationError } from '../../outbox.errors';
import { metricAlreadyRegistered } from '../../outbox.messages';
import { metricsOptionsDiffer, outboxMetricsTwice } from '../../outbox-name.messages';
import type { OutboxStatsSnapshot, RelayActivity } from '../../stats/outbox-stats';
import type { ResolvedMetricsOptions } from './metrics.options';
import { pausedDestinationsGauge } from './paused-destinations.gauge';

type Prom = typeof PromClient;

export interface OutboxMetricsSources {
  /** Cached stats: every gauge of one scrape shares one read. */
  stats: () => Promise<OutboxStatsSnapshot>;
  activity: () => RelayActivity;
}

// Labels are bounded: outbox, transport and destination come from configuration, event_type from code,
// tenant from the app's list of tenant databases (OutboxTenantsModule). No ids.
export const MESSAGE_LABELS = ['outbox', 'tenant', 'transport', 'destination', 'event_type'] as const;
export const DESTINATION_LABELS = ['outbox', 'tenant', 'transport', 'destination'] as const;
type MessageLabel = (typeof MESSAGE_LABELS)[number];
type DestinationLabel = (typeof DESTINATION_LABELS)[number];

/**
 * The labels of every series of one member: `outbox`, and `tenant` for a tenant's outbox only. An
 * outbox of its own leaves `tenant` out, so its series read as before tenants had metrics (to
 * Prometheus an empty label and a missing one are the same: `{tenant=""}` selects them).
 */
export type MemberLabels = {
  outbox: string;
  tenant?: string;
};

type SeriesLabels = Partial<Record<string, string>>;

/** One outbox's stats as read for one scrape; undefined when the read failed (counted, gauges keep their values). */
type Snapshot = () => Promise<OutboxStatsSnapshot | undefined>;

export interface Member {
  labels: MemberLabels;
  snapshot: Snapshot;
  activity: () => RelayActivity;
}

/** A metric's series can be taken out one label set at a time: what a member that leaves had written. */
interface Removable {
  remove(labels: SeriesLabels): void;
}

/**
 * The outbox metrics of one registry and prefix, shared by every outbox of the app that registers
 * there (`OutboxModule.forRoot({ name })` declared several times): prom-client takes each metric
 * name once per registry, so the outboxes are told apart by the `outbox` label. Removed from the
 * registry when the last outbox leaves.
 */
export class OutboxMetricSet {
  private static readonly sets = new WeakMap<PromClient.Registry, Map<string, OutboxMetricSet>>();

  private readonly members = new Map<string, Member>();
  // Per member, the series it wrote or that were collected for it: taken out when it leaves (a tenant removed at run time).
  private readonly series = new Map<string, Map<string, { metric: Removable; labels: SeriesLabels }>>();
  private readonly names: string[] = [];
  readonly published: PromClient.Counter<MessageLabel>;
  readonly failures: PromClient.Counter<MessageLabel>;
  readonly dead: PromClient.Counter<MessageLabel>;
  readonly leaseLost: PromClient.Counter<'outbox' | 'tenant' | 'outcome'>;
  readonly latency: PromClient.Histogram<DestinationLabel>;
  readonly duration: PromClient.Histogram<'outbox' | 'tenant' | 'transport' | 'outcome'>;
  readonly statsErrors: PromClient.Counter<'outbox' | 'tenant'>;
  readonly consecutiveFailures: PromClient.Gauge<DestinationLabel>;

  /** The set of `options`' registry and prefix, made on first use; the member joins it (refused if it is in already). */
  static join(prom: Prom, options: ResolvedMetricsOptions, member: MemberLabels, sources: OutboxMetricsSources): OutboxMetricSet {
    const name = member.tenant === undefined ? member.outbox : `${member.outbox}" tenant "${member.tenant}`;
    const registry = (options.registry as unknown as PromClient.Registry | undefined) ?? prom.register;
    let byPrefix = OutboxMetricSet.sets.get(registry);
    if (!byPrefix) OutboxMetricSet.sets.set(registry, (byPrefix = new Map()));
    let set = byPrefix.get(options.prefix);
    if (set && set.latencyBuckets.join() !== options.latencyBuckets.join()) throw new OutboxConfigurationError(metricsOptionsDiffer(name, options.prefix));
    if (set?.members.has(memberKey(member))) throw new OutboxConfigurationError(outboxMetricsTwice(name, options.prefix));
    if (!set) byPrefix.set(options.prefix, (set = new OutboxMetricSet(prom, registry, options)));
    set.add(member, sources);
    return set;
  }

  private constructor(prom: Prom, private readonly registry: PromClient.Registry, options: ResolvedMetricsOptions) {
    this.latencyBuckets = options.latencyBuckets;
    const p = (this.prefix = options.prefix);
    const names = [
      'messages_published_total', 'publish_failures_total', 'messages_dead_total', 'lease_lost_total', 'commit_to_ack_seconds',
      'publish_duration_seconds', 'stats_errors_total', 'publish_consecutive_failures', 'pending_messages', 'in_flight_messages', 'retrying_messages',
      'dead_messages', 'oldest_pending_age_seconds', 'relay_up', 'relay_last_round_timestamp_seconds', 'destination_paused',
    ].map((name) => p + name);
    // Checked before registering anything, so a clash leaves the registry as it was.
    for (const name of names) if (registry.getSingleMetric(name)) throw new OutboxConfigurationError(metricAlreadyRegistered(name));

    const registers = [registry];
    const track = <T>(name: string, metric: T): T => (this.names.push(p + name), metric);
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      track(name, new prom.Counter<L>({ name: p + name, help, labelNames, registers }));
    this.published = counter('messages_published_total', 'Messages the broker acknowledged and the relay marked published.', MESSAGE_LABELS);
    this.failures = counter('publish_failures_total', 'Failed publish attempts (each is retried until the row is dead).', MESSAGE_LABELS);
    this.dead = counter('messages_dead_total', 'Messages that used up their attempts and became dead.', MESSAGE_LABELS);
    this.leaseLost = counter('lease_lost_total', 'Outcomes not recorded because the lease had expired and another relay held the row.', ['outbox', 'tenant', 'outcome']);
    this.latency = track('commit_to_ack_seconds', new prom.Histogram({
      name: p + 'commit_to_ack_seconds', help: 'From the event being recorded (just before commit) to the broker acknowledgement being recorded.',
      labelNames: DESTINATION_LABELS, buckets: options.latencyBuckets, registers,
    }));
    this.duration = track('publish_duration_seconds', new prom.Histogram({
      name: p + 'publish_duration_seconds', help: 'Time a transport took to publish a group of messages and get the acknowledgement.',
      labelNames: ['outbox', 'tenant', 'transport', 'outcome'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    }));
    this.statsErrors = counter('stats_errors_total', 'Scrapes whose stats query failed; gauges then keep their previous values.', ['outbox', 'tenant']);
    // A gauge, not a counter: it has a value from the first failed attempt of a fresh process on,
    // where a counter series born at its first failure shows no increase to rate() or increase().
    this.consecutiveFailures = track('publish_consecutive_failures', new prom.Gauge({
      name: p + 'publish_consecutive_failures', help: 'Publish attempts to this destination that failed since its last acknowledged publish on this instance.',
      labelNames: DESTINATION_LABELS, registers,
    }));

    const members = this.members;
    const wrote = (member: string, metric: Removable, labels: SeriesLabels) => this.wrote(member, metric, labels);
    // Destinations seen once keep a series (at 0) after their rows are gone, instead of vanishing.
    const seen = new Map<string, Map<string, Partial<Record<DestinationLabel, string>>>>();
    const destinationGauge = (name: string, help: string, pick: (row: OutboxStatsSnapshot['destinations'][number]) => number | null) =>
      track(name, new prom.Gauge({
        name: p + name, help, labelNames: DESTINATION_LABELS, registers,
        collect: async function (this: PromClient.Gauge<DestinationLabel>) {
          for (const id of seen.keys()) if (!members.has(id)) seen.delete(id);
          for (const [member, { labels: base, snapshot }] of members) {
            const read = await snapshot();
            if (!read || !members.has(member)) continue;
            let known = seen.get(member);
            if (!known) seen.set(member, (known = new Map()));
            const values = new Map(read.destinations.map((row) => [key(row), row]));
            for (const row of read.destinations) known.set(key(row), { ...base, transport: row.transport, destination: row.destination });
            for (const [id, labels] of known) {
              const row = values.get(id);
              this.set(labels, row ? (pick(row) ?? 0) : 0);
              wrote(member, this, labels);
            }
          }
        },
      }));
    destinationGauge('pending_messages', 'Rows not yet acknowledged by the broker (in flight and retrying included).', (row) => row.pending);
    destinationGauge('in_flight_messages', 'Pending rows a relay is publishing now (held under a live lease).', (row) => row.inFlight);
    destinationGauge('retrying_messages', 'Pending rows that failed and wait for their next attempt.', (row) => row.retrying);
    destinationGauge('dead_messages', 'Dead rows waiting for an operator (requeue or discard).', (row) => row.dead);
    destinationGauge('oldest_pending_age_seconds', 'Age of the oldest pending row (the lag); 0 when nothing is pending.', (row) =>
      row.oldestPendingAgeMs === null ? 0 : row.oldestPendingAgeMs / 1000,
    );
    track('destination_paused', pausedDestinationsGauge(prom, p + 'destination_paused', registers, members, wrote));
    track('relay_up', new prom.Gauge({
      name: p + 'relay_up', help: '1 when this instance runs a relay, else 0.', labelNames: ['outbox', 'tenant'], registers,
      collect() {
        for (const [member, { labels, activity }] of members) {
          this.set(labels, activity().running ? 1 : 0);
          wrote(member, this, labels);
        }
      },
    }));
    track('relay_last_round_timestamp_seconds', new prom.Gauge({
      name: p + 'relay_last_round_timestamp_seconds', help: "Unix time this instance's relay last finished a claim → publish → settle round (liveness); rounds whose claim or settle failed do not count.",
      labelNames: ['outbox', 'tenant'], registers,
      collect() {
        for (const [member, { labels, activity }] of members) {
          const at = activity().lastRoundAt;
          this.set(labels, at ? at.getTime() / 1000 : 0);
          wrote(member, this, labels);
        }
      },
    }));
  }

  private readonly latencyBuckets: number[];
  private readonly prefix: string;

  /** Notes a series of the member's, to take out when it leaves. */
  wrote(member: MemberLabels | string, metric: Removable, labels: SeriesLabels): void {
    const id = typeof member === 'string' ? member : memberKey(member);
    if (!this.members.has(id)) return;
    let written = this.series.get(id);
    if (!written) this.series.set(id, (written = new Map()));
    const seriesKey = `${(metric as { name?: string }).name ?? ''}\u0000${JSON.stringify(labels)}`;
    if (!written.has(seriesKey)) written.set(seriesKey, { metric, labels });
  }

  /** Takes the member out with its series (a tenant removed while the app runs leaves no stale series); the last one out takes the metrics out of the registry. */
  leave(member: MemberLabels): void {
    const id = memberKey(member);
    if (!this.members.delete(id)) return;
    for (const { metric, labels } of this.series.get(id)?.values() ?? []) metric.remove(labels);
    this.series.delete(id);
    if (this.members.size > 0) return;
    for (const metric of this.names) this.registry.removeSingleMetric(metric);
    OutboxMetricSet.sets.get(this.registry)?.delete(this.prefix);
  }

  private add(labels: MemberLabels, sources: OutboxMetricsSources): void {
    let update: Promise<OutboxStatsSnapshot | undefined> | undefined;
    // One stats read per outbox and scrape at most (and one per refresh interval across scrapes, by the reader's cache).
    const snapshot = () => {
      update ??= sources.stats().then(
        (read) => read,
        () => (this.statsErrors.inc(labels), this.wrote(labels, this.statsErrors, { ...labels }), undefined),
      ).finally(() => setImmediate(() => (update = undefined)));
      return update;
    };
    this.members.set(memberKey(labels), { labels, snapshot, activity: sources.activity });
  }
}

function memberKey({ outbox, tenant }: MemberLabels): string {
  return tenant === undefined ? outbox : `${outbox}\u0000${tenant}`;
}

function key(row: { transport: string; destination: string }): string {
  return `${row.transport}\u0000${row.destination}`;
}
