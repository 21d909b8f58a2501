import request from 'supertest';
import type { App } from 'supertest/types';
import { KafkaBrokerControl } from './support/kafka-broker.control';
import { startOrderService, type RunningOrderService } from './support/order-service.harness';
import { sampleValue } from './support/prometheus-text';
import { waitFor } from './support/wait-for';

const order = { customerId: 'c-7', items: [{ sku: 'MUG-1', quantity: 1, unitPriceCents: 900 }] };

/** `/metrics` and `/health` of the demo, scraped over HTTP, on PostgreSQL and the Kafka test broker taken down and back. */
describe('order-service operations on PostgreSQL + Kafka', () => {
  let service: RunningOrderService | undefined;
  let broker: KafkaBrokerControl;
  let brokerDown = false;

  beforeEach(() => {
    broker = new KafkaBrokerControl();
  });

  let brokerRestarted = false;

  afterEach(async () => {
    if (brokerDown) await broker.start();
    // The demo's Kafka consumer rejoins its group by itself after an outage; closing the app while
    // it is still rejoining leaves kafkajs retrying in the background (it does not cancel a restart
    // under way). So the test ends once the consumer has received an order placed after the outage.
    if (brokerRestarted && service) await consumerBack(service.app.getHttpServer());
    brokerDown = brokerRestarted = false;
    await service?.close();
    service = undefined;
  });

  async function consumerBack(http: App): Promise<void> {
    const placed = await request(http).post('/orders').send(order).expect(201);
    await waitFor('the demo consumer to receive an order placed after the outage', async () => {
      const received = await request(http).get('/received-events').expect(200);
      return (received.body as Array<{ envelope: { aggregateId: string } }>).some((event) => event.envelope.aggregateId === placed.body.id);
    }, 90_000);
  }

  async function start(outbox: Partial<RunningOrderService['config']['outbox']>): Promise<App> {
    service = await startOrderService('postgres', 'kafka', { outbox: { statsRefreshMs: 100, ...outbox } });
    return service.app.getHttpServer();
  }

  async function stopBroker(): Promise<void> {
    brokerDown = brokerRestarted = true;
    await broker.stop();
  }

  async function startBroker(): Promise<void> {
    await broker.start();
    brokerDown = false;
  }

  const scrape = async (http: App) => {
    const response = await request(http).get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text;
  };

  it('counts published events, shows the lag rising while the broker is down and falling once it is back', async () => {
    const http = await start({});
    const topic = service!.config.ordersTopic;
    const labels = { transport: 'default', destination: topic, event_type: 'orders.order-placed' };
    await request(http).post('/orders').send(order).expect(201);
    await request(http).post('/orders').send(order).expect(201);
    // Gauges come from a stats snapshot up to statsRefreshMs old, counters from the relay: wait for both.
    const before = await waitFor('two published events and nothing pending in /metrics', async () => {
      const text = await scrape(http);
      return sampleValue(text, 'outbox_messages_published_total', labels) === 2 && sampleValue(text, 'outbox_pending_messages', { destination: topic }) === 0 && text;
    }, 30_000);
    expect(sampleValue(before, 'outbox_commit_to_ack_seconds_count', { destination: topic })).toBe(2);
    expect(sampleValue(before, 'outbox_relay_up')).toBe(1);
    expect(sampleValue(before, 'outbox_relay_last_round_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);

    await stopBroker();
    await request(http).post('/orders').send(order).expect(201);
    const firstLag = await waitFor('a failed attempt and a pending row in /metrics', async () => {
      const text = await scrape(http);
      const failures = sampleValue(text, 'outbox_publish_failures_total', labels) ?? 0;
      return failures >= 1 && sampleValue(text, 'outbox_pending_messages', { destination: topic }) === 1 && sampleValue(text, 'outbox_oldest_pending_age_seconds', { destination: topic });
    }, 30_000);
    await waitFor('the lag gauge to rise', async () => sampleValue(await scrape(http), 'outbox_oldest_pending_age_seconds', { destination: topic })! > firstLag + 0.5, 30_000);

    await startBroker();
    await waitFor('the lag gauge to fall to 0 and the third event to be counted', async () => {
      const text = await scrape(http);
      return sampleValue(text, 'outbox_oldest_pending_age_seconds', { destination: topic }) === 0 && sampleValue(text, 'outbox_messages_published_total', labels) === 3;
    }, 60_000);
  });

  it('shows an event that used up its attempts in the dead gauge and counter', async () => {
    const http = await start({ maxAttempts: 2, backoffInitialMs: 100, backoffMaxMs: 200 });
    const topic = service!.config.ordersTopic;
    await stopBroker();
    await request(http).post('/orders').send(order).expect(201);
    // The gauge reads the table, the counter is fed by the relay right after it wrote the row: wait for both.
    const text = await waitFor('a dead row in /metrics', async () => {
      const scraped = await scrape(http);
      const dead = sampleValue(scraped, 'outbox_messages_dead_total', { destination: topic, event_type: 'orders.order-placed' });
      return sampleValue(scraped, 'outbox_dead_messages', { destination: topic }) === 1 && dead === 1 && scraped;
    }, 30_000);
    expect(sampleValue(text, 'outbox_publish_failures_total', { destination: topic, event_type: 'orders.order-placed' })).toBe(2);
    expect(sampleValue(text, 'outbox_pending_messages', { destination: topic })).toBe(0);
  });

  it('reports /health up, then down with the reason while the broker is down past the lag threshold, then up again', async () => {
    const http = await start({ healthMaxLagMs: 1_500 });
    const up = await request(http).get('/health').expect(200);
    expect(up.body).toMatchObject({ status: 'ok', info: { outbox: { status: 'up', pending: 0, relayRunning: true } } });

    await stopBroker();
    await request(http).post('/orders').send(order).expect(201);
    const down = await waitFor('/health to report the outbox down', async () => {
      const response = await request(http).get('/health');
      return response.status === 503 && response;
    }, 30_000);
    expect(down.body.status).toBe('error');
    expect(down.body.error.outbox).toMatchObject({ status: 'down', pending: 1 });
    expect(down.body.error.outbox.reason).toMatch(/oldest pending message .* is \d+\.\d s old, over health\.maxLagMs \(1\.5 s\)/);

    await startBroker();
    await waitFor('/health to be up again', async () => (await request(http).get('/health')).status === 200, 60_000);
  });
});
