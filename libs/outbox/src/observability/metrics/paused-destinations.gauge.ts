import type * as PromClient from 'prom-client';
import type { OutboxStatsSnapshot } from '../../core/stats/outbox-stats';

/**
 * `<prefix>destination_paused{destination}`: 1 while an operator holds the destination paused, 0
 * once resumed (a destination seen paused keeps its series, so a resume is a visible change, not a
 * vanished series). Alert on a pause nobody lifted: `<prefix>destination_paused == 1` for an hour.
 */
export function pausedDestinationsGauge(
  prom: typeof PromClient,
  name: string,
  registers: PromClient.Registry[],
  snapshot: () => Promise<OutboxStatsSnapshot | undefined>,
): PromClient.Gauge<'destination'> {
  const seen = new Set<string>();
  return new prom.Gauge({
    name,
    help: 'Whether an operator paused publishing to the destination (1) or not (0); see the console or "nest-outbox paused".',
    labelNames: ['destination'],
    registers,
    async collect() {
      const read = await snapshot();
      if (!read) return;
      const paused = new Set(read.paused.map((p) => p.destination));
      for (const destination of paused) seen.add(destination);
      for (const destination of seen) this.set({ destination }, paused.has(destination) ? 1 : 0);
    },
  });
}
