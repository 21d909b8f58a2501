import type * as PromClient from 'prom-client';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { metricAlreadyRegistered } from '../core/outbox.messages';
import { outboxMetricsTwice } from '../core/outbox-name.messages';
import type { WalSlotLag } from './wal-slot.setup';

interface StreamedOutbox {
  slot: string;
  read: () => Promise<WalSlotLag | undefined>;
}

// The outboxes of one registry and prefix that stream a slot: prom-client takes each name once per registry.
const families = new WeakMap<PromClient.Registry, Map<string, Map<string, StreamedOutbox>>>();

/**
 * The WAL mode's gauges, read from the slot at scrape time (through the stream's cached reading):
 * `<prefix>wal_slot_retained_bytes`, `<prefix>wal_slot_lag_seconds` and `<prefix>wal_slot_active`,
 * labelled `outbox` and `slot`, shared by the app's outboxes in the WAL mode. Returns what takes
 * this outbox out again (and the gauges out of the registry with the last one).
 */
export function registerWalSlotMetrics(prom: typeof PromClient, options: { registry?: unknown; prefix: string }, outbox: string, slot: string, read: () => Promise<WalSlotLag | undefined>): () => void {
  const registry = (options.registry as unknown as PromClient.Registry | undefined) ?? prom.register;
  let byPrefix = families.get(registry);
  if (!byPrefix) families.set(registry, (byPrefix = new Map()));
  let members = byPrefix.get(options.prefix);
  if (members?.has(outbox)) throw new OutboxConfigurationError(outboxMetricsTwice(outbox, options.prefix));
  const names = ['wal_slot_retained_bytes', 'wal_slot_lag_seconds', 'wal_slot_active'].map((name) => options.prefix + name);
  if (!members) {
    for (const name of names) if (registry.getSingleMetric(name)) throw new OutboxConfigurationError(metricAlreadyRegistered(name));
    byPrefix.set(options.prefix, (members = new Map()));
    registerGauges(prom, registry, names, members);
  }
  let reading: Promise<WalSlotLag | undefined> | undefined;
  // The three gauges of one scrape share one reading.
  const lag = () => {
    reading ??= read().finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  members.set(outbox, { slot, read: lag });
  const joined = members;
  return () => {
    if (!joined.delete(outbox) || joined.size > 0) return;
    names.forEach((name) => registry.removeSingleMetric(name));
    byPrefix.delete(options.prefix);
  };
}

function registerGauges(prom: typeof PromClient, registry: PromClient.Registry, names: string[], members: ReadonlyMap<string, StreamedOutbox>): void {
  const gauge = (name: string, help: string, value: (lag: WalSlotLag | undefined) => number | undefined) =>
    new prom.Gauge({
      name,
      help,
      labelNames: ['outbox', 'slot'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const [outbox, { slot, read }] of members) {
          const measured = value(await read().catch(() => undefined));
          if (measured !== undefined) this.set({ outbox, slot }, measured);
        }
      },
    });
  gauge(names[0], 'Bytes of WAL the outbox replication slot retains (from its confirmed position to the current one).', (l) => l?.retainedBytes);
  gauge(names[1], 'Seconds between the server flushing WAL and the outbox stream confirming it; 0 when caught up.', (l) => (l ? (l.lagSeconds ?? 0) : undefined));
  gauge(names[2], '1 when an instance streams the outbox replication slot, else 0.', (l) => (l ? Number(l.active) : undefined));
}
