import { OutboxInbox } from '@nest-outbox/outbox';
import { OutboxInboxPoisonHealthIndicator } from '@nest-outbox/outbox/observability';
import { startInbox, type InboxVariant } from './inbox.harness';

/** The inbox's terminus indicator on a real SQLite inbox (TypeORM's, and the module's own `connection`): down while a message waits set aside, up once an operator deals with it. */
describe.each<InboxVariant>(['typeorm', 'connection'])('OutboxInboxPoisonHealthIndicator (SQLite, %s)', (variant) => {
  let app: Awaited<ReturnType<typeof startInbox>>;

  beforeAll(async () => {
    app = await startInbox('sqlite', variant, { maxAttempts: 2 }, { controllers: [], providers: [] });
  });

  afterAll(() => app?.close());

  it('is down with the count and the oldest age while messages wait set aside, up when only failing or none', async () => {
    const health = app.module.get(OutboxInboxPoisonHealthIndicator);
    expect((await health.isHealthy())['inbox-poison']).toMatchObject({ status: 'up', waiting: 0, oldestWaitingAgeSeconds: null });

    const store = app.poisonStore();
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

    await app.module.get(OutboxInbox).poison!.remove('billing', 'm-1');
    expect((await health.isHealthy())['inbox-poison']).toMatchObject({ status: 'up', waiting: 0 });
  });
});
