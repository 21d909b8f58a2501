import { randomBytes } from 'node:crypto';
import { Module, type INestApplication, type LoggerService } from '@nestjs/common';
import { OutboxTenants, OutboxTenantsModule } from '@nest-outbox/outbox/tenants';
import { RecordingTransport } from '../support/recording.transport';
import { requireService } from '../support/services';
import { StallingProxy } from '../support/stalling-proxy';
import { waitFor } from '../support/wait-for';
import { commitTenantEvents } from './tenant-events';
import { startTenantsApp, createTenantDatabase, dropTenantDatabases } from './tenant-database.fixtures';

interface Line {
  level: 'log' | 'warn' | 'error';
  message: string;
  stack?: string;
}

/**
 * A tenant whose database stops answering fails its claim at every poll (every 100 ms here). Its log
 * names the tenant and its table on every line, carries one stack (the first failure's), not one
 * per poll, and says once when the relay gets through again.
 */
describe('tenant databases: a failing relay logs its tenant, once with a stack', () => {
  const suffix = randomBytes(4).toString('hex');
  const server = requireService('postgres');
  const name = `tenant_logs_${suffix}`;
  const lines: Line[] = [];
  // Nest's Logger passes (message, stack, context) for error, (message, context) for the others.
  const logger: LoggerService = {
    log: (message: unknown) => void lines.push({ level: 'log', message: String(message) }),
    warn: (message: unknown) => void lines.push({ level: 'warn', message: String(message) }),
    error: (message: unknown, stack?: unknown) => void lines.push({ level: 'error', message: String(message), stack: typeof stack === 'string' && stack.includes('\n') ? stack : undefined }),
  };
  const transport = new RecordingTransport();
  let url: string;
  let proxy: StallingProxy;
  let app: INestApplication;
  let outboxes: OutboxTenants;

  beforeAll(async () => {
    url = await createTenantDatabase(server, name);
    proxy = await StallingProxy.start(server);

    @Module({
      imports: [
        OutboxTenantsModule.forRoot({
          tenants: () => [{ id: 'acme', url: proxy.urlFor(url) }],
          transport, defaultTopic: `tenant-logs-${suffix}`,
          pollIntervalMs: 100, refreshIntervalMs: 60_000, connectTimeoutMs: 200, queryTimeoutMs: 200, idleTimeoutMs: 60_000,
          leaseMs: 2_000, publishTimeoutMs: 1_000, shutdownTimeoutMs: 2_000,
        }),
      ],
    })
    class TenantLogsApp {}
    ({ app, outboxes } = await startTenantsApp(TenantLogsApp, logger));
  }, 60_000);

  afterAll(async () => {
    proxy?.resume();
    await app?.close();
    await proxy?.close();
    await dropTenantDatabases(server, [name]);
  }, 60_000);

  it('names the tenant on every line of its failing relay, logs one stack over many failed polls, and one line at recovery', async () => {
    const [first] = await commitTenantEvents(outboxes, 'acme', url);
    await waitFor('the first event of acme', () => transport.delivered.some((message) => message.envelope.aggregateId === first), 10_000);
    const before = lines.length;

    proxy.stall();
    await waitFor('acme\'s relay to be reported failing', () => outboxes.status()[0]?.error !== undefined, 10_000);
    // Each poll's claim fails after at most 200 ms (its statement, or a new connection, gets no answer): let many fail.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    proxy.resume();
    const recovery = await waitFor('the relay\'s recovery line', () => lines.slice(before).find((line) => line.message.includes('completes its rounds again')), 15_000);
    const [, failures] = /after [\d.]+ s and (\d+) failure\(s\)/.exec(recovery.message) ?? [];
    const after = await commitTenantEvents(outboxes, 'acme', url);
    await waitFor('acme\'s event after its database answers again', () => transport.delivered.some((message) => message.envelope.aggregateId === after[0]), 10_000);

    // From the stall to the recovery line: a connection that flaps afterwards (a 200 ms connect bound on a busy machine) is another outage.
    const outage = lines.slice(before, lines.indexOf(recovery) + 1);
    const failed = outage.filter((line) => line.level !== 'log');
    expect(Number(failures)).toBeGreaterThanOrEqual(5);
    expect(failed.length).toBeGreaterThan(0);
    for (const line of [...failed, recovery]) expect(line.message).toMatch(/^Outbox of tenant "acme" \(outbox_messages\): /);
    // One stack for the whole outage, however many polls failed; lines of a changed error carry none.
    expect(outage.filter((line) => line.stack !== undefined)).toHaveLength(1);
    expect(failed.filter((line) => line.level === 'error').length).toBeLessThan(Number(failures));
  }, 60_000);
});
