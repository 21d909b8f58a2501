import { InMemoryOutboxStore } from '../in-memory-outbox.store';
import type { ClaimRequest } from '../outbox-store.port';
import type { ClaimedMessage, NewOutboxMessage } from '../outbox-message';
import { OutboxRelay } from '../outbox-relay';
import type { OutboxTransport } from '../outbox-transport.port';
import { RetryPolicy } from '../retry-policy';
import { RelayActivityTracker } from './relay-activity';

/** The in-memory store with a database that can go away: its claims and settles throw. */
class FlakyStore extends InMemoryOutboxStore {
  down = false;
  settleDown = false;
  override async claim(request: ClaimRequest): Promise<ClaimedMessage[]> {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return super.claim(request);
  }
  override async markPublished(token: string, positions: string[]): Promise<number> {
    if (this.settleDown) throw new Error('connection terminated');
    return super.markPublished(token, positions);
  }
}

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };
let sequence = 0;
const message = (): NewOutboxMessage => ({
  id: `m-${++sequence}`, type: 'thing.happened', version: 1, aggregateType: 'thing', aggregateId: `a-${sequence}`,
  transport: 'default', destination: 'things', occurredAt: new Date(0), headers: {}, payloadJson: '{}',
});

describe('RelayActivityTracker', () => {
  let now: number;
  let store: FlakyStore;
  let brokerUp: boolean;
  let tracker: RelayActivityTracker;
  let relay: OutboxRelay;

  beforeEach(() => {
    now = 1_000_000;
    store = new FlakyStore(() => now);
    brokerUp = true;
    tracker = new RelayActivityTracker(() => now);
    const transport: OutboxTransport = { name: 'flaky', publish: async () => { if (!brokerUp) throw new Error('broker away'); } };
    relay = new OutboxRelay({
      store, transports: new Map([['default', transport]]), retryPolicy: new RetryPolicy(10, { initialMs: 1, maxMs: 1, jitter: 0 }),
      owner: 'relay-a', batchSize: 10, leaseMs: 30_000, publishTimeoutMs: 5_000, logger: silent, observer: tracker,
    });
  });
  afterEach(() => relay.stop(1_000));

  it('counts an empty round and a round whose publishes failed as finished; only the first as successful', async () => {
    await relay.publishBatch();
    expect(tracker.activity()).toMatchObject({ lastRoundAt: new Date(now), lastSuccessfulRoundAt: new Date(now) });
    now += 1_000;
    brokerUp = false;
    store.add([message()]);
    expect(await relay.publishBatch()).toMatchObject({ claimed: 1, retried: 1 });
    expect(tracker.activity()).toMatchObject({ lastRoundAt: new Date(now), lastSuccessfulRoundAt: new Date(now - 1_000) });
  });

  it('stands still while every claim fails (database away), and moves again when a claim answers', async () => {
    await relay.publishBatch();
    const before = new Date(now);
    store.down = true;
    for (let round = 0; round < 5; round++) {
      now += 10_000;
      await relay.publishBatch();
    }
    expect(tracker.activity()).toMatchObject({ lastRoundAt: before, lastSuccessfulRoundAt: before });
    store.down = false;
    now += 1_000;
    await relay.publishBatch();
    expect(tracker.activity().lastRoundAt).toEqual(new Date(now));
  });

  it('does not count a round whose outcomes could not be recorded', async () => {
    await relay.publishBatch();
    const before = new Date(now);
    now += 5_000;
    store.add([message()]);
    store.settleDown = true;
    expect(await relay.publishBatch()).toMatchObject({ claimed: 1 });
    expect(tracker.activity().lastRoundAt).toEqual(before);
  });
});
