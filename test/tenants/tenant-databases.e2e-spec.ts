import { randomBytes } from 'node:crypto';
import { Module, type INestApplication } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { OutboxTenantsHealthIndicator } from '@nest-outbox/outbox/observability';
import { OutboxTenants, OutboxTenantsModule, type TenantDatabase } from '@nest-outbox/outbox/tenants';
import { postgresAdmin, postgresRows } from '../support/databases';
import { freePort } from '../support/free-port';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { PrivatePostgres } from '../support/private-postgres';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { commitTenantEvents } from './tenant-events';
import { startTenantsApp, createTenantDatabase, createOutboxTable, dropTenantDatabases } from './tenant-database.fixtures';

/**
 * OutboxTenantsModule on a list of tenant databases that changes while the app runs: four
 * databases on the shared PostgreSQL server, one on a server of the test's own that is stopped, and
 * one that never answers; everything relayed to one topic of the Kafka test broker, at most one
 * round at a time over all tenants.
 */
describe('tenant databases: outboxes that come and go while the app runs', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `tenants-${suffix}`;
  const brokers = requireService('kafka').split(',');
  const server = requireService('postgres');
  const names = { a: `tenant_a_${suffix}`, b: `tenant_b_${suffix}`, c: `tenant_c_${suffix}` };
  const urls: Record<string, string> = {};
  const tenants: TenantDatabase[] = [];
  let own: PrivatePostgres;
  let reader: KafkaTopicReader;
  let app: INestApplication;
  let outboxes: OutboxTenants;
  let health: OutboxTenantsHealthIndicator;

  const commitEvent = (tenant: string, count = 1) => commitTenantEvents(outboxes, tenant, urls[tenant], count);

  const arrived = (id: string) => reader.forKey(id).length > 0;
  const openConnections = async (database: string) =>
    Number((await postgresRows(server, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${database}' AND application_name = 'nest-outbox'`))[0].n);

  beforeAll(async () => {
    own = await PrivatePostgres.start('tenant-d');
    await postgresAdmin(own.url(), 'CREATE DATABASE tenant_d');
    await createOutboxTable(own.url('tenant_d'));
    urls.a = await createTenantDatabase(server, names.a);
    urls.b = await createTenantDatabase(server, names.b);
    urls.c = await createTenantDatabase(server, names.c);
    urls.d = own.url('tenant_d');
    urls.ghost = `postgres://postgres@127.0.0.1:${await freePort()}/nothing`;
    tenants.push({ id: 'a', url: urls.a }, { id: 'b', url: urls.b }, { id: 'd', url: urls.d }, { id: 'ghost', url: urls.ghost });

    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();

    @Module({
      imports: [
        ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `tenants-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]),
        OutboxTenantsModule.forRoot({
          tenants: () => [...tenants], transport: 'KAFKA', resolveTopic: () => topic,
          pollIntervalMs: 200, refreshIntervalMs: 1_000, maxConcurrentRounds: 1, batchSize: 20, connectTimeoutMs: 1_000, idleTimeoutMs: 60_000,
          backoff: { initialMs: 200, maxMs: 1_000 },
        }),
      ],
    })
    class TenantsApp {}
    ({ app, outboxes } = await startTenantsApp(TenantsApp, false));
    health = app.get(OutboxTenantsHealthIndicator);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await reader?.stop();
    await own?.cleanup();
    await dropTenantDatabases(server, Object.values(names));
  }, 60_000);

  it('opens every tenant whose database answers and reports the one that does not, which holds back no one', async () => {
    expect(outboxes.status()).toEqual([
      { id: 'a', state: 'open' },
      { id: 'b', state: 'open' },
      { id: 'd', state: 'open' },
      { id: 'ghost', state: 'failing', error: expect.stringContaining('ECONNREFUSED'), failingSince: expect.any(Date) },
    ]);
    // The health check (@nestjs/terminus) lists the ghost; it is down once that lasts past maxFailingMs.
    const ghost = { id: 'ghost', state: 'failing', error: expect.stringContaining('ECONNREFUSED'), failingForSeconds: expect.any(Number) };
    expect(await health.isHealthy('tenants')).toEqual({ tenants: { status: 'up', open: 3, failing: [ghost] } });
    expect(await health.isHealthy('tenants', { maxFailingMs: 0 })).toEqual({
      tenants: { status: 'down', reason: expect.stringMatching(/^tenant "ghost" could not be opened for [\d.]+ s \(over maxFailingMs, 0 s\): .*ECONNREFUSED/), open: 3, failing: [ghost] },
    });
    const [a] = await commitEvent('a');
    const [b] = await commitEvent('b');
    await waitFor('the events of a and b on the topic', () => arrived(a) && arrived(b), 30_000);
    expect(reader.forKey(a)[0].value).toMatchObject({ type: 'tenants.note-written', payload: { tenant: 'a', id: a } });
    await expect(outboxes.add('ghost', {} as never, [])).rejects.toThrow('The outbox of the tenant "ghost" is not open (');
    await expect(outboxes.add('zeta', {} as never, [])).rejects.toThrow('There is no outbox for the tenant "zeta"');
  });

  it('goes on publishing for the others while one tenant\'s server is down, and publishes that tenant\'s events once it is back', async () => {
    const [before] = await commitEvent('d');
    await waitFor('tenant d\'s first event', () => arrived(before), 30_000);
    await own.end('immediate');
    try {
      // Its pool finds the server gone; its relay's claims fail while the others take their turns.
      await waitFor('tenant d\'s database to refuse', () => outboxes.stats('d', { fresh: true }).then(() => false, () => true), 30_000);
      const [a] = await commitEvent('a');
      await waitFor('tenant a\'s event while d is down', () => arrived(a), 30_000);
      // status() names why d's relay gets nowhere, while a stays plainly open.
      await waitFor('tenant d\'s relay failure in status()', () => outboxes.status().some((tenant) => tenant.id === 'd' && tenant.error !== undefined), 30_000);
      expect(outboxes.status().find((tenant) => tenant.id === 'd')).toEqual({ id: 'd', state: 'open', error: expect.any(String), failingSince: expect.any(Date) });
      expect(outboxes.status().find((tenant) => tenant.id === 'a')).toEqual({ id: 'a', state: 'open' });
      expect((await health.isHealthy('tenants', { maxFailingMs: 0 })).tenants.reason).toMatch(/tenant "d" has had its relay failing for [\d.]+ s/);
    } finally {
      await own.begin();
    }
    const [after] = await waitFor('tenant d taking writes again', () => commitEvent('d').catch(() => false), 30_000);
    await waitFor('tenant d\'s event after its restart', () => arrived(after), 30_000);
    await waitFor('tenant d\'s relay failure cleared from status()', () => outboxes.status().some((tenant) => tenant.id === 'd' && tenant.error === undefined), 30_000);
  });

  it('gives a tenant added at run time its relay without a restart, and takes rounds in turn with a tenant that has a backlog', async () => {
    tenants.push({ id: 'c', url: urls.c });
    await waitFor('tenant c to open at a refresh', () => outboxes.status().some((tenant) => tenant.id === 'c' && tenant.state === 'open'), 30_000);
    const backlog = await commitEvent('a', 5_000);
    const [c] = await commitEvent('c');
    await waitFor('tenant c\'s event', () => arrived(c), 30_000);
    // Rounds are handed out in turn: c's one event did not wait for a's 250 batches.
    const pendingOfA = (await outboxes.stats('a', { fresh: true })).pending;
    expect(pendingOfA).toBeGreaterThan(0);
    await waitFor('tenant a\'s backlog', () => backlog.every(arrived), 120_000);
  }, 150_000);

  it('closes the connections of a tenant removed from the list', async () => {
    expect(await openConnections(names.b)).toBeGreaterThan(0);
    tenants.splice(tenants.findIndex((tenant) => tenant.id === 'b'), 1);
    await outboxes.refresh();
    expect(outboxes.status().map((tenant) => tenant.id)).not.toContain('b');
    await waitFor('tenant b\'s connections to close', async () => (await openConnections(names.b)) === 0, 30_000);
    await expect(outboxes.add('b', {} as never, [])).rejects.toThrow('There is no outbox for the tenant "b"');
  });
});
