import type * as PromClient from 'prom-client';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { metricAlreadyRegistered } from '../core/outbox.messages';
import { outboxMetricsTwice } from '../core/outbox-name.messages';
import type { WalSlotLag } from './wal-slot.setup';

/** What one outbox's stream tells its gauges: the slot's lag (shared per scrape) and the slots it made anew. */
export interface StreamReadings {
  lag: () => Promise<WalSlotLag | undefined>;
  incidents: () => { eventsKept: number; eventsMayBeLost: number };
}

interface StreamedOutbox {
  slot: string;
  read: () => Promise<WalSlotLag | undefined>;
  incidents: StreamReadings['incidents'];
}

// The outboxes of one registry and prefix that stream a slot: prom-client takes each name once per registry.
const families = new WeakMap<PromClient.Registry, Map<string, Map<string, StreamedOutbox>>>();

/**
 * The WAL mode's gauges, read from the slot at scrape time (through the stream's cached reading):
 * `<prefix>wal_slot_retained_bytes`, `<prefix>wal_slot_lag_seconds` and `<prefix>wal_slot_active`,
 * labelled `outbox` and `slot`, shared by the app's outboxes in the WAL mode; 0 while this database
 * has no usable slot (missing, invalidated, another database's), never absent, so that an alert on
 * them still fires. `<prefix>wal_slot_incidents_total` counts slots made anew over a former one,
 * labelled `events`: `kept` (rows) or `may_be_lost` (messages). Returns what takes this outbox out
 * again (and the metrics out of the registry with the last one).
 */
export function registerWalSlotMetrics(prom: typeof PromClient, options: { registry?: unknown; prefix: string }, outbox: string, slot: string, readings: StreamReadings): () => void {
  const registry = (options.registry as unknown as PromClient.Registry | undefined) ?? prom.register;
  let byPrefix = families.get(registry);
  if (!byPrefix) families.set(registry, (byPrefix = new Map()));
  let members = byPrefix.get(options.prefix);
  if (members?.has(outbox)) throw new OutboxConfigurationError(outboxMetricsTwice(outbox, options.prefix));
  const names = ['wal_slot_retained_bytes', 'wal_slot_lag_seconds', 'wal_slot_active', 'wal_slot_incidents_total'].map((name) => options.prefix + name);
  if (!members) {
    for (const name of names) if (registry.getSingleMetric(name)) throw new OutboxConfigurationError(metricAlreadyRegistered(name));
    byPrefix.set(options.prefix, (members = new Map()));
    registerGauges(prom, registry, names, members);
  }
  let reading: Promise<WalSlotLag | undefined> | undefined;
  // The three gauges of one scrape share one reading.
  const lag = () => {
    reading ??= readings.lag().finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  members.set(outbox, { slot, read: lag, incidents: readings.incidents });
  const joined = members;
  return () => {
    if (!joined.delete(outbox) || joined.size > 0) return;
    names.forEach((name) => registry.removeSingleMetric(name));
    byPrefix.delete(options.prefix);
  };
}

function registerGauges(prom: typeof PromClient, registry: PromClient.Registry, names: string[], members: ReadonlyMap<string, StreamedOutbox>): void {
  const gauge = (name: string, help: string, value: (lag: WalSlotLag | undefined) => number) =>
    new prom.Gauge({
      name,
      help,
      labelNames: ['outbox', 'slot'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const [outbox, { slot, read }] of members) {
          // A failed reading says nothing (absent); a slot this database cannot use reads 0.
          const reading = await read().then(
            (lag) => ({ lag: lag && !lag.invalidated && lag.foreignDatabase === undefined ? lag : undefined }),
            () => undefined,
          );
          if (reading) this.set({ outbox, slot }, value(reading.lag));
        }
      },
    });
  gauge(names[0], 'Bytes of WAL the outbox replication slot retains (from its confirmed position to the current one); 0 without a usable slot.', (l) => l?.retainedBytes ?? 0);
  gauge(names[1], 'Seconds between the server flushing WAL and the outbox stream confirming it; 0 when caught up or without a usable slot.', (l) => l?.lagSeconds ?? 0);
  gauge(names[2], '1 when an instance streams the outbox replication slot, else 0 (also while this database has no usable slot).', (l) => Number(l?.active ?? false));
  new prom.Counter({
    name: names[3],
    help: 'Replication slots the outbox stream made anew over a former one (dropped, invalidated, missing after a failover); events="may_be_lost" with wal.write message.',
    labelNames: ['outbox', 'slot', 'events'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outbox, { slot, incidents }] of members) {
        const { eventsKept, eventsMayBeLost } = incidents();
        this.inc({ outbox, slot, events: 'kept' }, eventsKept);
        this.inc({ outbox, slot, events: 'may_be_lost' }, eventsMayBeLost);
      }
    },
  });
}
