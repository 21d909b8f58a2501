import type * as PromClient from 'prom-client';
import type { OutboxStatsSnapshot } from '../../core/stats/outbox-stats';

/**
 * `<prefix>destination_paused{outbox, destination}`: 1 while an operator holds the destination
 * paused, 0 once resumed (a destination seen paused keeps its series, so a resume is a visible
 * change, not a vanished series). Alert on a pause nobody lifted: `<prefix>destination_paused == 1` for an hour.
 */
export function pausedDestinationsGauge(
  prom: typeof PromClient,
  name: string,
  registers: PromClient.Registry[],
  outboxes: ReadonlyMap<string, () => Promise<OutboxStatsSnapshot | undefined>>,
): PromClient.Gauge<'outbox' | 'destination'> {
  const seen = new Map<string, Set<string>>();
  return new prom.Gauge({
    name,
    help: 'Whether an operator paused publishing to the destination (1) or not (0); see the console or "nest-outbox paused".',
    labelNames: ['outbox', 'destination'],
    registers,
    async collect() {
      for (const [outbox, snapshot] of outboxes) {
        const read = await snapshot();
        if (!read) continue;
        const paused = new Set(read.paused.map((p) => p.destination));
        let known = seen.get(outbox);
        if (!known) seen.set(outbox, (known = new Set()));
        for (const destination of paused) known.add(destination);
        for (const destination of known) this.set({ outbox, destination }, paused.has(destination) ? 1 : 0);
      }
    },
  });
}
