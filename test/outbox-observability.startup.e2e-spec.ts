import { mkdtempSync, rmSync } from 'node:fs';
import { silentLogger } from './support/silent-logger';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Counter, Registry } from 'prom-client';
import { CreateOutboxTable, OutboxConfigurationError, OutboxModule, type OutboxModuleOptions, type OutboxTransport } from '@nest-outbox/outbox';
import { OutboxHealthIndicator } from '@nest-outbox/outbox/observability';

const transport: OutboxTransport = { name: 'nowhere', publish: async () => undefined };

/** Observability options are checked when the app starts, and the error names the option (SQLite). */
describe('observability options at startup', () => {
  let dir: string;
  let module: TestingModule | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-observability-'));
  });

  afterEach(async () => {
    await module?.close();
    module = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(options: OutboxModuleOptions): Promise<TestingModule> {
    const compiled = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0 }),
        OutboxModule.forRoot({ transport, ...options }),
      ],
    })
      .setLogger(silentLogger)
      .compile();
    compiled.useLogger(false);
    try {
      await compiled.init();
    } catch (error) {
      // NestJS 11.0.0's close() rethrows a failed init's error (later versions close what was opened).
      await compiled.close().catch(() => undefined);
      throw error;
    }
    module = compiled;
    return compiled;
  }

  it.each([
    [{ stats: { refreshIntervalMs: 0 } }, 'stats.refreshIntervalMs'],
    [{ health: { maxLagMs: -1 } }, 'health.maxLagMs'],
    [{ health: { maxDeadRows: 1.5 } }, 'health.maxDeadRows'],
    [{ health: { maxRoundAgeMs: 1_000 } }, 'health.maxRoundAgeMs'],
    [{ metrics: { prefix: 'outbox-' } }, 'metrics.prefix'],
    [{ metrics: { latencyBuckets: [1, 0.5] } }, 'metrics.latencyBuckets'],
    [{ metrics: { registry: {} as never } }, 'metrics.registry'],
    [{ tracing: 'yes' as never }, 'tracing'],
  ])('%j fails at startup naming %s', async (options, option) => {
    const failure = start(options as OutboxModuleOptions);
    await expect(failure).rejects.toThrow(OutboxConfigurationError);
    await expect(failure).rejects.toThrow(`"${option}"`);
  });

  it('refuses metric names already in the registry with a clear error, leaving the registry as it was', async () => {
    const registry = new Registry();
    new Counter({ name: 'outbox_messages_published_total', help: 'the app’s own', registers: [registry] });
    const failure = start({ metrics: { registry } });
    await expect(failure).rejects.toThrow(OutboxConfigurationError);
    await expect(failure).rejects.toThrow(/"outbox_messages_published_total".*already in the prom-client registry.*"metrics\.prefix"/);
    expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual(['outbox_messages_published_total']);
  });

  it('lets two modules share a registry under different prefixes, and takes the metrics out on shutdown', async () => {
    const registry = new Registry();
    registry.registerMetric(new Counter({ name: 'outbox_messages_published_total', help: 'another outbox', registers: [] }));
    const app = await start({ metrics: { registry, prefix: 'billing_outbox_' } });
    expect(await registry.metrics()).toContain('billing_outbox_pending_messages');
    expect(await app.get(OutboxHealthIndicator).isHealthy('outbox')).toEqual({ outbox: expect.objectContaining({ status: 'up', pending: 0 }) });
    await app.close();
    module = undefined;
    expect(registry.getSingleMetric('billing_outbox_pending_messages')).toBeUndefined();
  });
});
