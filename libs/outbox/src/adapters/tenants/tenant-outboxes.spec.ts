import { TenantOutbox, type TenantOutboxShared } from './tenant-outbox';
import { TenantOutboxes } from './tenant-outboxes';

/**
 * The bookkeeping of `status()` while tenants open; opening a tenant itself (its pool, its table) is
 * stubbed here and runs against real databases in test/tenants/.
 */
describe('TenantOutboxes.status', () => {
  afterEach(() => jest.restoreAllMocks());

  it('shows a tenant whose first opening is under way as opening, then failing with the error and since when, then open', async () => {
    const opened = { relayFailure: () => undefined, close: async () => undefined } as unknown as TenantOutbox;
    const attempts: Array<{ resolve: (outbox: TenantOutbox) => void; reject: (error: Error) => void }> = [];
    jest.spyOn(TenantOutbox, 'open').mockImplementation(() => new Promise((resolve, reject) => attempts.push({ resolve, reject })));
    const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };
    const outboxes = new TenantOutboxes({
      list: () => [{ id: 'acme', url: 'postgres://app@db/acme' }],
      refreshIntervalMs: 60_000,
      poolSize: 2,
      closeTimeoutMs: 1_000,
      shared: { logger } as unknown as TenantOutboxShared,
    });

    const first = outboxes.refresh();
    await waitUntil(() => attempts.length === 1);
    expect(outboxes.status()).toEqual([{ id: 'acme', state: 'opening' }]);
    attempts[0].reject(new Error('connect ECONNREFUSED'));
    await first;
    expect(outboxes.status()).toEqual([{ id: 'acme', state: 'failing', error: 'connect ECONNREFUSED', failingSince: expect.any(Date) }]);
    const since = outboxes.status()[0].failingSince;

    // Tried again at the next refresh: still failing (with its first failure's time) while it opens.
    const second = outboxes.refresh();
    await waitUntil(() => attempts.length === 2);
    expect(outboxes.status()).toEqual([{ id: 'acme', state: 'failing', error: 'connect ECONNREFUSED', failingSince: since }]);
    attempts[1].resolve(opened);
    await second;
    expect(outboxes.status()).toEqual([{ id: 'acme', state: 'open' }]);
    await outboxes.stop();
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('the condition did not hold within 100 turns of the event loop');
}
