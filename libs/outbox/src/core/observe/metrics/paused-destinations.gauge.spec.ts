import * as prom from 'prom-client';
import { summarize } from '../../stats/outbox-stats.reader';
import type { OutboxStatsSnapshot } from '../../stats/outbox-stats';
import { pausedDestinationsGauge } from './paused-destinations.gauge';

describe('destination_paused gauge', () => {
  it('is 1 per paused destination and 0 once it is resumed; keeps the last values when the stats fail', async () => {
    const registry = new prom.Registry();
    const relay = { running: false, lastRoundAt: null, lastSuccessfulRoundAt: null };
    const at = (destinations: string[]): OutboxStatsSnapshot =>
      summarize([], 0, relay, destinations.map((destination) => ({ destination, pausedAt: '2026-11-24T04:00:00.000Z', reason: null })));
    let next: OutboxStatsSnapshot | undefined = at(['billing', 'audit']);
    pausedDestinationsGauge(prom, 'outbox_destination_paused', [registry], new Map([['default', { labels: { outbox: 'default' }, snapshot: async () => next }]]));
    const read = async () => (await registry.metrics()).split('\n').filter((line) => line.startsWith('outbox_destination_paused{'));
    expect(await read()).toEqual(['outbox_destination_paused{outbox="default",destination="billing"} 1', 'outbox_destination_paused{outbox="default",destination="audit"} 1']);
    next = at(['audit']);
    expect(await read()).toEqual(['outbox_destination_paused{outbox="default",destination="billing"} 0', 'outbox_destination_paused{outbox="default",destination="audit"} 1']);
    next = undefined;
    expect(await read()).toEqual(['outbox_destination_paused{outbox="default",destination="billing"} 0', 'outbox_destination_paused{outbox="default",destination="audit"} 1']);
  });
});
