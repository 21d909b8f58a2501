import { randomBytes } from 'node:crypto';
import { Module, type INestApplication, type LoggerService } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { OutboxTenants, OutboxTenantsModule } from '@nest-outbox/outbox/tenants';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { StallingProxy } from '../support/stalling-proxy';
import { waitFor } from '../support/wait-for';
import { commitTenantEvents } from './tenant-events';
import { startTenantsApp, createTenantDatabase, dropTenantDatabases } from './tenant-database.fixtures';

const QUERY_TIMEOUT_MS = 500;

/**
 * A tenant database that accepts connections and then stops answering (a hung server, a network
 * path that drops packets), made with a TCP proxy that stops forwarding: with one relay turn for
 * all tenants, the hung tenant's claim fails after queryTimeoutMs and gives the turn back, so the
 * other tenant's events still go out; once its database answers again, its events go out too.
 * Without the bound the hung claim keeps the only turn and nothing is relayed for anyone.
 */
describe('tenant databases: one that stops answering holds back no other tenant', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `tenants-hung-${suffix}`;
  const brokers = requireService('kafka').split(',');
  const server = requireService('postgres');
  const names = { a: `tenant_hung_a_${suffix}`, b: `tenant_hung_b_${suffix}` };
  const urls: Record<string, string> = {};
  const errors: string[] = [];
  const logger: LoggerService = { log() {}, warn() {}, error: (message: unknown) => void errors.push(String(message)) };
  let proxy: StallingProxy;
  let reader: KafkaTopicReader;
  let app: INestApplication;
  let outboxes: OutboxTenants;

  const tenantDatabase = (name: string) => createTenantDatabase(server, name);

  /** Commits one event in the tenant's database, straight to it (not through the proxy), then wakes its relay. */
  const commitEvent = async (tenant: 'a' | 'b') => (await commitTenantEvents(outboxes, tenant, urls[tenant]))[0];

  const arrived = (id: string) => reader.forKey(id).length > 0;

  beforeAll(async () => {
    urls.a = await tenantDatabase(names.a);
    urls.b = await tenantDatabase(names.b);
    proxy = await StallingProxy.start(server);
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();

    @Module({
      imports: [
        ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `tenants-hung-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]),
        OutboxTenantsModule.forRoot({
          // Tenant a's relay reaches its database through the proxy; b's directly.
          tenants: () => [{ id: 'a', url: proxy.urlFor(urls.a) }, { id: 'b', url: urls.b }],
          transport: 'KAFKA', resolveTopic: () => topic,
          pollIntervalMs: 200, refreshIntervalMs: 60_000, maxConcurrentRounds: 1, connectTimeoutMs: 1_000, idleTimeoutMs: 60_000,
          queryTimeoutMs: QUERY_TIMEOUT_MS, shutdownTimeoutMs: 2_000,
          // The claim abandoned during the stall reaches the database on resume and leases a's row
          // with no one to publish it: it is claimed again once this lease ends.
          leaseMs: 2_000, publishTimeoutMs: 1_500,
        }),
      ],
    })
    class HungTenantApp {}
    ({ app, outboxes } = await startTenantsApp(HungTenantApp, logger));
  }, 60_000);

  afterAll(async () => {
    proxy?.resume();
    await app?.close();
    await reader?.stop();
    await proxy?.close();
    await dropTenantDatabases(server, Object.values(names));
  }, 60_000);

  it('relays tenant b while tenant a hangs, and tenant a once it answers again, losing nothing', async () => {
    expect(outboxes.status()).toEqual([{ id: 'a', state: 'open' }, { id: 'b', state: 'open' }]);
    const [firstOfA, firstOfB] = [await commitEvent('a'), await commitEvent('b')];
    await waitFor('the first events of a and b', () => arrived(firstOfA) && arrived(firstOfB), 15_000);

    proxy.stall();
    const stalledOfA = await commitEvent('a');
    // Tenant a's relay has sent a claim that got no answer and timed out; from now on each of its
    // polls sends another, which holds the one turn until it times out too. (Bytes held in the proxy
    // alone do not show that a claim holds the turn: any of a's connections may have sent them.)
    const timedOut = `a statement on its database exceeded queryTimeoutMs (${QUERY_TIMEOUT_MS} ms)`;
    await waitFor('tenant a\'s claim to time out', () => errors.some((message) => message.includes('Tenant "a"') && message.includes(timedOut)), 10_000);
    const ofB = await commitEvent('b');
    await waitFor('tenant b\'s event while tenant a hangs', () => arrived(ofB), 10_000);
    expect(arrived(stalledOfA)).toBe(false);
    // An operator sees the same in status(): a's relay failing since its claim timed out (its latest
    // failure may be a later poll's: a statement or a new connection timing out); b plainly open.
    expect(outboxes.status()).toEqual([
      { id: 'a', state: 'open', error: expect.stringMatching(new RegExp(`exceeded queryTimeoutMs \\(${QUERY_TIMEOUT_MS} ms\\)|connection timeout`)), failingSince: expect.any(Date) },
      { id: 'b', state: 'open' },
    ]);

    proxy.resume();
    await waitFor('tenant a\'s event committed while it hung', () => arrived(stalledOfA), 15_000);
    const afterOfA = await commitEvent('a');
    await waitFor('tenant a\'s event after it answers again', () => arrived(afterOfA), 15_000);
    expect(outboxes.status()).toEqual([{ id: 'a', state: 'open' }, { id: 'b', state: 'open' }]);
  }, 60_000);
});
