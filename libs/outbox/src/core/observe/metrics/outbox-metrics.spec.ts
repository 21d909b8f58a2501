import * as prom from 'prom-client';
import type { ClaimedMessage } from '../../outbox-message';
import type { MessageOutcome } from '../relay-observer';
import { summarize } from '../../stats/outbox-stats.reader';
import { resolveMetricsOptions } from './metrics.options';
import { OutboxMetrics } from './outbox-metrics';

const idle = { running: true, lastRoundAt: null, lastSuccessfulRoundAt: null };
const claimed = (destination: string) => ({ transport: 'default', destination, type: 'order.placed', occurredAt: new Date(0).toISOString() }) as ClaimedMessage;
const ok = (destination: string): MessageOutcome => ({ message: claimed(destination), durationMs: 1 });
const failed = (destination: string): MessageOutcome => ({ message: claimed(destination), error: 'ECONNREFUSED', retryInMs: 1_000, durationMs: 1 });

describe('OutboxMetrics', () => {
  let registry: prom.Registry;
  let metrics: OutboxMetrics;
  const settle = (...outcomes: MessageOutcome[]) => metrics.settled({ relayId: 'r', outcomes, leaseLost: { published: 0, failed: 0 } });
  const streak = async (destination: string) =>
    (await registry.getSingleMetric('outbox_publish_consecutive_failures')!.get()).values.find((value) => value.labels.destination === destination)?.value;

  beforeEach(() => {
    registry = new prom.Registry();
    metrics = new OutboxMetrics(prom, resolveMetricsOptions({ registry })!, { stats: async () => summarize([], 0, idle), activity: () => idle });
  });
  afterEach(() => metrics.remove());

  it('counts failed publishes in a row per destination from the first failed batch of the process, and resets on an acknowledged one', async () => {
    expect(await streak('orders')).toBeUndefined();
    settle(failed('orders'), failed('orders'), ok('invoices'));
    // A fresh process: the series exists with its value at once, so a rule sees it from the first scrape.
    expect(await streak('orders')).toBe(2);
    expect(await streak('invoices')).toBe(0);
    settle(failed('orders'));
    expect(await streak('orders')).toBe(3);
    settle(failed('orders'), ok('orders'));
    expect(await streak('orders')).toBe(0);
  });

  it('refuses to start on a registry that already holds the new gauge, naming it', () => {
    const other = new prom.Registry();
    new prom.Gauge({ name: 'outbox_publish_consecutive_failures', help: 'taken', registers: [other] });
    expect(() => new OutboxMetrics(prom, resolveMetricsOptions({ registry: other })!, { stats: async () => summarize([], 0, idle), activity: () => idle }))
      .toThrow('outbox_publish_consecutive_failures');
  });

  it('labels a tenant outbox\'s series with its tenant, leaves the label off an outbox of its own, and takes a removed tenant\'s series out', async () => {
    const stats = async () => summarize([], 0, idle);
    const acme = new OutboxMetrics(prom, resolveMetricsOptions({ registry })!, { stats, activity: () => idle }, Date.now, 'tenants', 'acme');
    const globex = new OutboxMetrics(prom, resolveMetricsOptions({ registry })!, { stats, activity: () => idle }, Date.now, 'tenants', 'globex');
    settle(ok('orders'));
    acme.settled({ relayId: 'r/acme', outcomes: [ok('orders'), failed('orders')], leaseLost: { published: 1, failed: 0 } });
    globex.settled({ relayId: 'r/globex', outcomes: [ok('orders')], leaseLost: { published: 0, failed: 0 } });
    const lines = async (name: string) => (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`));
    expect(await lines('outbox_messages_published_total')).toEqual([
      'outbox_messages_published_total{outbox="default",transport="default",destination="orders",event_type="order.placed"} 1',
      'outbox_messages_published_total{outbox="tenants",tenant="acme",transport="default",destination="orders",event_type="order.placed"} 1',
      'outbox_messages_published_total{outbox="tenants",tenant="globex",transport="default",destination="orders",event_type="order.placed"} 1',
    ]);
    expect(await lines('outbox_relay_up')).toEqual(['outbox_relay_up{outbox="default"} 1', 'outbox_relay_up{outbox="tenants",tenant="acme"} 1', 'outbox_relay_up{outbox="tenants",tenant="globex"} 1']);
    expect(await lines('outbox_lease_lost_total')).toEqual(['outbox_lease_lost_total{outbox="tenants",tenant="acme",outcome="published"} 1']);

    acme.remove();
    const after = await registry.metrics();
    expect(after).not.toContain('tenant="acme"');
    expect(after).toContain('outbox_messages_published_total{outbox="default"');
    expect(await lines('outbox_relay_up')).toEqual(['outbox_relay_up{outbox="default"} 1', 'outbox_relay_up{outbox="tenants",tenant="globex"} 1']);
    globex.remove();
  });
});
