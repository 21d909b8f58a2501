import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, OutboxInbox, OutboxInboxModule } from '@nest-outbox/outbox';
import { TypeOrmPoisonStore } from '@nest-outbox/outbox/typeorm';
import { OutboxInboxPoisonHealthIndicator } from '@nest-outbox/outbox/observability';
import { isolatedDatabase } from '../support/outbox-harness';

/** The inbox's terminus indicator on a real SQLite inbox: down while a message waits set aside, up once an operator deals with it. */
describe('OutboxInboxPoisonHealthIndicator (SQLite)', () => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let module: TestingModule;

  beforeAll(async () => {
    isolated = await isolatedDatabase('sqlite');
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...isolated.options, migrations: [CreateInboxTable, CreateInboxPoisonTable], migrationsRun: true, logging: false } as TypeOrmModuleOptions),
        OutboxInboxModule.forRoot({ pruneIntervalMs: 0, replayPollMs: 0, poison: { maxAttempts: 2 } }),
      ],
    }).compile();
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    await isolated?.drop();
  });

  it('is down with the count and the oldest age while messages wait set aside, up when only failing or none', async () => {
    const health = module.get(OutboxInboxPoisonHealthIndicator);
    expect((await health.isHealthy())['inbox-poison']).toMatchObject({ status: 'up', waiting: 0, oldestWaitingAgeSeconds: null });

    const store = new TypeOrmPoisonStore(module.get(DataSource), 'outbox_inbox_poison', 'outbox_inbox');
    const failure = { consumer: 'billing', key: 'm-1', messageId: 'm-1', raw: '{"id":"m-1"}', truncated: false, reason: 'handler failed: boom' };
    await store.countFailure(failure, 2);
    // One failure of two: the broker retries it, nothing waits yet.
    expect((await health.isHealthy())['inbox-poison']).toMatchObject({ status: 'up', waiting: 0, consumers: [{ consumer: 'billing', failing: 1 }] });

    await store.countFailure(failure, 2);
    const down = (await health.isHealthy('poison'))['poison'];
    expect(down).toMatchObject({ status: 'down', waiting: 1, consumers: [{ consumer: 'billing', waiting: 1, failing: 0 }] });
    expect(down.reason).toMatch(/^1 poison message\(s\) wait set aside \(billing: 1\), the oldest first failed \d+(\.\d)? s ago/);
    expect(down.oldestWaitingAgeSeconds).toBeGreaterThanOrEqual(0);
    expect((await health.isHealthy('poison', { maxWaiting: 1 }))['poison'].status).toBe('up');

    await module.get(OutboxInbox).poison!.remove('billing', 'm-1');
    expect((await health.isHealthy())['inbox-poison']).toMatchObject({ status: 'up', waiting: 0 });
  });
});
