import type * as PromClient from 'prom-client';
import type { OutboxStatsSnapshot } from '../../stats/outbox-stats';

/**
 * `<prefix>destination_paused{outbox, tenant, destination}` (`tenant` for a tenant's outbox only): 1 while an operator holds the destination
 * paused, 0 once resumed (a destination seen paused keeps its series, so a resume is a visible
 * change, not a vanished series). Alert on a pause nobody lifted: `<prefix>destination_paused == 1` for an hour.
 */
export function pausedDestinationsGauge(
  prom: typeof PromClient,
  name: string,
  registers: PromClient.Registry[],
  outboxes: ReadonlyMap<string, { labels: { outbox: string; tenant?: string }; snapshot: () => Promise<OutboxStatsSnapshot | undefined> }>,
  wrote: (member: string, metric: PromClient.Gauge<'outbox' | 'tenant' | 'destination'>, labels: Partial<Record<string, string>>) => void = () => undefined,
): PromClient.Gauge<'outbox' | 'tenant' | 'destination'> {
  const seen = new Map<string, Set<string>>();
  return new prom.Gauge({
    name,
    help: 'Whether an operator paused publishing to the destination (1) or not (0); see the console or "nest-outbox paused".',
    labelNames: ['outbox', 'tenant', 'destination'],
    registers,
    async collect() {
      for (const id of seen.keys()) if (!outboxes.has(id)) seen.delete(id);
      for (const [id, { labels, snapshot }] of outboxes) {
        const read = await snapshot();
        if (!read || !outboxes.has(id)) continue;
        const paused = new Set(read.paused.map((p) => p.destination));
        let known = seen.get(id);
        if (!known) seen.set(id, (known = new Set()));
        for (const destination of paused) known.add(destination);
        for (const destination of known) {
          const series = { ...labels, destination };
          this.set(series, paused.has(destination) ? 1 : 0);
          wrote(id, this, series);
        }
      }
    },
  });
}
