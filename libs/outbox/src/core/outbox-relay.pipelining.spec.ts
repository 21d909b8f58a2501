import { InMemoryOutboxStore } from './in-memory-outbox.store';
import type { NewOutboxMessage } from './outbox-message';
import { OutboxRelay } from './outbox-relay';
import type { OutboxTransport } from './outbox-transport.port';
import { RetryPolicy } from './retry-policy';
import { GatedTransport, letGoNewestFirst, until } from './outbox-relay.fixtures';
import { contractMessage } from '../testing/contracts/contract-messages';

const message = (aggregateId: string): NewOutboxMessage => contractMessage({ aggregateId });

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

function pipelinedRelay(store: InMemoryOutboxStore, transport: OutboxTransport, maxBatchesInFlight: number, batchSize: number, publishTimeoutMs = 5_000): OutboxRelay {
  return new OutboxRelay({
    store,
    transports: new Map([['default', transport]]),
    retryPolicy: new RetryPolicy(3, { initialMs: 1_000, maxMs: 10_000, jitter: 0 }),
    owner: 'relay-a',
    batchSize,
    maxBatchesInFlight,
    leaseMs: 30_000,
    publishTimeoutMs,
    logger: silent,
  });
}


describe('OutboxRelay with several batches in flight', () => {
  let store: InMemoryOutboxStore;
  let transport: GatedTransport;
  const leaseTokens = () => new Set(store.rows.filter((row) => row.status === 'pending' && row.leaseToken).map((row) => row.leaseToken));

  beforeEach(() => {
    store = new InMemoryOutboxStore(() => 1_000_000);
    transport = new GatedTransport();
  });

  it('claims the next batch while the previous one publishes, and never holds more than maxBatchesInFlight', async () => {
    store.add(Array.from({ length: 50 }, (_, index) => message(`k${index}`)));
    const drained = pipelinedRelay(store, transport, 2, 10).trigger();

    await until('two batches handed to the broker', () => transport.waiting.size === 20);
    expect(leaseTokens().size).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(transport.waiting.size).toBe(20); // no third claim while two are unsettled

    while (store.rows.some((row) => row.status !== 'published')) {
      await until('a publish to let go', () => transport.waiting.size > 0);
      [...transport.waiting.values()][0]();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await drained;
    expect(transport.mostAtOnce).toBe(20);
    expect(new Set(transport.delivered).size).toBe(50);
  });

  it('keeps each aggregate in order: a key is in at most one batch in flight', async () => {
    const keys = ['a', 'b', 'c'];
    const written = Array.from({ length: 60 }, (_, index) => message(keys[index % 3]));
    store.add(written);
    const keyOf = new Map(written.map((row) => [row.id, row.aggregateId]));
    const drained = pipelinedRelay(store, transport, 3, 5).trigger();

    const heldTwoOfOneKey = await letGoNewestFirst(transport, written.length, keyOf, () => new Promise((resolve) => setImmediate(resolve)));
    await drained;
    expect(heldTwoOfOneKey).toBe(false);
    for (const key of keys) {
      const inOrder = written.filter((row) => row.aggregateId === key).map((row) => row.id);
      expect(transport.delivered.filter((id) => keyOf.get(id) === key)).toEqual(inOrder);
    }
  });

  it('claims again when a batch settled while an empty claim ran, instead of ending the drain', async () => {
    // One aggregate: the second claim finds its head leased by the first batch and comes back empty,
    // but only after the first batch has settled. The rows behind it are claimable by then.
    const written = Array.from({ length: 30 }, () => message('one-key'));
    store.add(written);
    const claim = store.claim.bind(store);
    store.claim = async (request) => {
      const claimed = await claim(request);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return claimed;
    };
    const instant: OutboxTransport = { name: 'instant', publish: async () => undefined };

    await pipelinedRelay(store, instant, 2, 10).trigger();

    expect(store.rows.filter((row) => row.status === 'published')).toHaveLength(30);
  });

  it('on a shutdown that cannot wait, marks what the broker acknowledged in every batch in flight, and gives back the rest', async () => {
    // Two batches, each a run of two rows of one key plus a row of another; the second row of each run hangs.
    const [a1, a2, b1, c1, c2, d1] = [message('a'), message('a'), message('b'), message('c'), message('c'), message('d')];
    store.add([a1, a2, b1, c1, c2, d1]);
    transport.hanging.add(a2.id).add(c2.id);
    // A short publish timeout, so that the hanging publishes end with the test.
    const relay = pipelinedRelay(store, transport, 2, 3, 100);
    const drained = relay.trigger();
    await until('both batches sent their first wave', () => transport.waiting.size === 4);
    transport.releaseAll();
    await until('the second rows are on their way', () => leaseTokens().size === 2 && transport.delivered.length === 4);

    await relay.stop(20);

    const statusOf = (id: string) => store.rows.find((row) => row.message.id === id)?.status;
    expect([a1, b1, c1, d1].map((row) => statusOf(row.id))).toEqual(['published', 'published', 'published', 'published']);
    expect([a2, c2].map((row) => statusOf(row.id))).toEqual(['pending', 'pending']);
    expect(leaseTokens().size).toBe(0);
    // The batches end when their hanging publishes time out: nothing of this test may outlive it.
    await drained;
    expect([a2, c2].map((row) => statusOf(row.id))).toEqual(['pending', 'pending']);
  });
});
