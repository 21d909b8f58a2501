import { randomBytes } from 'node:crypto';
import { Controller, Get, Header, Module, type INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { Registry } from 'prom-client';
import request from 'supertest';
import { OutboxTenants, OutboxTenantsModule, type TenantDatabase } from '@nest-outbox/outbox/tenants';
import { sampleValue } from '../support/prometheus-text';
import { RecordingTransport } from '../support/recording.transport';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';
import { commitTenantEvents } from './tenant-events';
import { startTenantsApp, createTenantDatabase, dropTenantDatabases } from './tenant-database.fixtures';

/**
 * Two tenants' outboxes with metrics on: the app's /metrics has each tenant's series, labelled
 * `outbox="tenants"` and `tenant="<id>"`, with that tenant's own values; a tenant removed from the
 * list takes its series out at the next refresh.
 */
describe('tenant databases: metrics per tenant', () => {
  const suffix = randomBytes(4).toString('hex');
  const server = requireService('postgres');
  const names = { acme: `tenant_metrics_acme_${suffix}`, globex: `tenant_metrics_globex_${suffix}` };
  const urls: Record<string, string> = {};
  const topic = `tenant-metrics-${suffix}`;
  const registry = new Registry();
  const transport = new RecordingTransport();
  let tenants: TenantDatabase[] = [];
  let app: INestApplication;
  let outboxes: OutboxTenants;

  const tenantDatabase = (name: string) => createTenantDatabase(server, name);

  /** Commits one event of the tenant due in 10 minutes: it stays pending. */
  async function commitDelayedEvent(tenant: string): Promise<void> {
    const client = new Client({ connectionString: urls[tenant] });
    await client.connect();
    try {
      await client.query('BEGIN');
      await outboxes.add(tenant, client, { type: 'tenants.note-written', aggregateType: 'note', aggregateId: `${tenant}-later`, payload: {}, delayMs: 600_000 });
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
  }

  const scrape = async () => (await request(app.getHttpServer()).get('/metrics').expect(200)).text;

  beforeAll(async () => {
    urls.acme = await tenantDatabase(names.acme);
    urls.globex = await tenantDatabase(names.globex);
    tenants = [{ id: 'acme', url: urls.acme }, { id: 'globex', url: urls.globex }];

    @Controller()
    class MetricsController {
      @Get('metrics')
      @Header('Content-Type', 'text/plain; version=0.0.4')
      metrics(): Promise<string> {
        return registry.metrics();
      }
    }

    @Module({
      imports: [
        OutboxTenantsModule.forRoot({
          tenants: () => tenants,
          transport, defaultTopic: topic, metrics: { registry },
          pollIntervalMs: 200, refreshIntervalMs: 60_000, shutdownTimeoutMs: 2_000,
        }),
      ],
      controllers: [MetricsController],
    })
    class TenantMetricsApp {}
    ({ app, outboxes } = await startTenantsApp(TenantMetricsApp, silentLogger));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await dropTenantDatabases(server, Object.values(names));
  }, 60_000);

  it('serves each tenant\'s series with its tenant label and its own values, and drops a removed tenant\'s', async () => {
    await commitTenantEvents(outboxes, 'acme', urls.acme, 2);
    await commitTenantEvents(outboxes, 'globex', urls.globex, 1);
    await commitDelayedEvent('globex');
    await waitFor('the three due events', () => transport.delivered.length === 3, 10_000);

    const tenant = (id: string, more: Record<string, string> = {}) => ({ outbox: 'tenants', tenant: id, ...more });
    // The gauges come from each tenant's stats, read at most every 5 s: scraped until they show the commits.
    const text = await waitFor('the gauges of both tenants', async () => {
      const scraped = await scrape();
      // acme's rows are deleted as they are published: it has no destination series unless a scrape saw them pending (then at 0).
      return sampleValue(scraped, 'outbox_pending_messages', tenant('globex')) === 1 && (sampleValue(scraped, 'outbox_pending_messages', tenant('acme')) ?? 0) === 0 && scraped;
    }, 15_000);
    expect(sampleValue(text, 'outbox_messages_published_total', tenant('acme', { destination: topic }))).toBe(2);
    expect(sampleValue(text, 'outbox_messages_published_total', tenant('globex', { destination: topic }))).toBe(1);
    expect(sampleValue(text, 'outbox_commit_to_ack_seconds_count', tenant('acme', { destination: topic }))).toBe(2);
    expect(sampleValue(text, 'outbox_relay_up', tenant('acme'))).toBe(1);
    expect(sampleValue(text, 'outbox_relay_up', tenant('globex'))).toBe(1);
    expect(sampleValue(text, 'outbox_oldest_pending_age_seconds', tenant('globex'))).toBeGreaterThanOrEqual(0);
    expect(sampleValue(text, 'outbox_relay_last_round_timestamp_seconds', tenant('globex'))).toBeGreaterThan(Date.now() / 1000 - 60);
    // Every series of the tenant outboxes names its tenant.
    const unlabelled = text.split('\n').filter((line) => line.includes('outbox="tenants"') && !/tenant="(acme|globex)"/.test(line));
    expect(unlabelled).toEqual([]);

    tenants = [{ id: 'acme', url: urls.acme }];
    await outboxes.refresh();
    const after = await scrape();
    expect(after).not.toContain('tenant="globex"');
    expect(sampleValue(after, 'outbox_messages_published_total', tenant('acme', { destination: topic }))).toBe(2);
  }, 60_000);
});
