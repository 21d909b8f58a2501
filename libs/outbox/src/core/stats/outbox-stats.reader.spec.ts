import { InMemoryOutboxStore } from '../in-memory-outbox.store';
import type { NewOutboxMessage } from '../outbox-message';
import type { DestinationCounts, OutboxStatsSource } from './outbox-stats.port';
import { OutboxStatsReader } from './outbox-stats.reader';

const idle = () => ({ running: true, lastRoundAt: null, lastSuccessfulRoundAt: null });

function message(id: string, destination: string, transport = 'default'): NewOutboxMessage {
  return { id, type: 't', version: 1, aggregateType: 'a', aggregateId: id, transport, destination, occurredAt: new Date(0), headers: {}, payloadJson: '{}' };
}

describe('OutboxStatsReader', () => {
  it('counts each destination and the totals from the in-memory store', async () => {
    let now = 1_000_000;
    const store = new InMemoryOutboxStore(() => now);
    store.add([message('1', 'orders'), message('2', 'orders'), message('3', 'billing', 'partner')]);
    now += 4_000;
    store.add([message('4', 'orders')]);
    const [first] = await store.claim({ owner: 'r', token: 'k1', limit: 1, leaseMs: 30_000 });
    await store.markPublished('k1', [first.position]);
    const [second] = await store.claim({ owner: 'r', token: 'k2', limit: 1, leaseMs: 30_000 });
    await store.markFailed('k2', [{ position: second.position, error: 'down', retryInMs: 10_000 }]);
    const [third] = await store.claim({ owner: 'r', token: 'k3', limit: 1, leaseMs: 30_000 });
    await store.markFailed('k3', [{ position: third.position, error: 'poison', retryInMs: null }]);
    await store.claim({ owner: 'r', token: 'k4', limit: 1, leaseMs: 30_000 });
    now += 1_000;

    const snapshot = await new OutboxStatsReader({ source: store, refreshIntervalMs: 5_000, relayActivity: idle, now: () => now }).snapshot();

    expect(snapshot.destinations).toEqual([
      expect.objectContaining({ transport: 'default', destination: 'orders', pending: 2, inFlight: 1, retrying: 1, dead: 0, publishedLastMinute: 1, oldestPendingAgeMs: 5_000 }),
      expect.objectContaining({ transport: 'partner', destination: 'billing', pending: 0, dead: 1, oldestPendingAgeMs: null, lastPublishedAt: null }),
    ]);
    expect(snapshot).toMatchObject({ pending: 2, inFlight: 1, retrying: 1, dead: 1, publishedLastMinute: 1, publishedLastHour: 1, oldestPendingAgeMs: 5_000 });
    expect(snapshot.lastPublishedAt).toEqual(new Date(now - 1_000));
  });

  it('queries once per refresh interval, shares a query between concurrent callers, and does not cache a failure', async () => {
    let now = 0;
    let reads = 0;
    let fail = false;
    const source: OutboxStatsSource = {
      readCounts: async (): Promise<DestinationCounts[]> => {
        reads++;
        if (fail) throw new Error('database down');
        return [];
      },
    };
    const reader = new OutboxStatsReader({ source, refreshIntervalMs: 5_000, relayActivity: idle, now: () => now });

    await Promise.all([reader.snapshot(), reader.snapshot(), reader.snapshot()]);
    now = 4_999;
    await reader.snapshot();
    expect(reads).toBe(1);

    now = 5_000;
    fail = true;
    await expect(reader.snapshot()).rejects.toThrow('database down');
    fail = false;
    await reader.snapshot();
    expect(reads).toBe(3);
    await reader.snapshot({ fresh: true });
    expect(reads).toBe(4);
  });
});
