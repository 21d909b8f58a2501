import type * as PromClient from 'prom-client';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { metricAlreadyRegistered } from '../core/outbox.messages';
import type { WalSlotLag } from './wal-slot.setup';

/**
 * The WAL mode's gauges, read from the slot at scrape time (through the stream's cached reading):
 * `<prefix>wal_slot_retained_bytes`, `<prefix>wal_slot_lag_seconds` and `<prefix>wal_slot_active`.
 * Returns what takes them out of the registry again.
 */
export function registerWalSlotMetrics(prom: typeof PromClient, options: { registry?: unknown; prefix: string }, slot: string, read: () => Promise<WalSlotLag | undefined>): () => void {
  const registry = (options.registry as unknown as PromClient.Registry | undefined) ?? prom.register;
  const names = ['wal_slot_retained_bytes', 'wal_slot_lag_seconds', 'wal_slot_active'].map((name) => options.prefix + name);
  for (const name of names) if (registry.getSingleMetric(name)) throw new OutboxConfigurationError(metricAlreadyRegistered(name));
  let reading: Promise<WalSlotLag | undefined> | undefined;
  // The three gauges of one scrape share one reading.
  const lag = () => {
    reading ??= read().finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  const gauge = (name: string, help: string, value: (lag: WalSlotLag | undefined) => number | undefined) =>
    new prom.Gauge({
      name,
      help,
      labelNames: ['slot'],
      registers: [registry],
      async collect() {
        const measured = value(await lag().catch(() => undefined));
        if (measured === undefined) this.reset();
        else this.set({ slot }, measured);
      },
    });
  gauge(names[0], 'Bytes of WAL the outbox replication slot retains (from its confirmed position to the current one).', (l) => l?.retainedBytes);
  gauge(names[1], 'Seconds between the server flushing WAL and the outbox stream confirming it; 0 when caught up.', (l) => (l ? (l.lagSeconds ?? 0) : undefined));
  gauge(names[2], '1 when an instance streams the outbox replication slot, else 0.', (l) => (l ? Number(l.active) : undefined));
  return () => names.forEach((name) => registry.removeSingleMetric(name));
}
