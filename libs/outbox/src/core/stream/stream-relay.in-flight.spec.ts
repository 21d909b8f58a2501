import type { OutgoingMessage } from '../outbox-message';
import type { OutboxTransport } from '../outbox-transport.port';
import { commit, relayOn, settled } from './stream-relay.fixtures';

/** Holds the publishes of the aggregates in `held` until `release`; refuses those in `refusing` a number of times. */
class KeyedBroker implements OutboxTransport {
  readonly name = 'keyed';
  readonly published: string[] = [];
  readonly held = new Set<string>();
  readonly refusing = new Map<string, number>();
  private waiting: Array<() => void> = [];

  async publish(outgoing: OutgoingMessage): Promise<void> {
    const key = outgoing.envelope.aggregateId;
    while (this.held.has(key)) await new Promise<void>((resume) => this.waiting.push(resume));
    const refusals = this.refusing.get(key) ?? 0;
    if (refusals > 0) {
      this.refusing.set(key, refusals - 1);
      throw new Error(`no leader for ${key}`);
    }
    this.published.push(outgoing.envelope.id);
  }

  release(key: string): void {
    this.held.delete(key);
    const waiting = this.waiting;
    this.waiting = [];
    waiting.forEach((resume) => resume());
  }
}

const ticks = async (count = 50) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('StreamRelay with batches in flight (maxBatchesInFlight)', () => {
  it('publishes the next batch while one waits for its acknowledgement, and confirms only in commit order', async () => {
    const broker = new KeyedBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker as never, confirmed, 2, 8, undefined, { maxBatchesInFlight: 2 });
    broker.held.add('a');
    await relay.accept(commit(10n, 'a', 'b'));
    await relay.accept(commit(20n, 'c', 'd'));
    await settled(() => broker.published.includes('20-0') && broker.published.includes('20-1'));
    await ticks();
    // Commit 20 is acknowledged, but commit 10 is not: nothing may be confirmed yet.
    expect(confirmed).toEqual([]);
    broker.release('a');
    await settled(() => confirmed.at(-1) === 20n);
    // Once commit 10 is acknowledged, both are confirmed at once: the position moves past 20.
    expect(confirmed).toEqual([20n]);
    await relay.stop();
  });

  it('ends a batch before the first message of an aggregate that an unsettled batch holds', async () => {
    const broker = new KeyedBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker as never, confirmed, 3, 12, undefined, { maxBatchesInFlight: 2 });
    broker.held.add('a');
    await relay.accept(commit(10n, 'a', 'b'));
    await relay.accept(commit(20n, 'c', 'a', 'd'));
    await settled(() => broker.published.includes('20-0'));
    await ticks();
    // c went out in the second batch; a's second message and d, behind it, wait for the first batch.
    expect(broker.published).not.toContain('20-1');
    expect(broker.published).not.toContain('20-2');
    broker.release('a');
    await settled(() => confirmed.at(-1) === 20n);
    expect(broker.published.indexOf('10-0')).toBeLessThan(broker.published.indexOf('20-1'));
    expect(broker.published).toContain('20-2');
    await relay.stop();
  });

  it('keeps an aggregate in order while its batch is retried and later batches of other aggregates go out', async () => {
    const broker = new KeyedBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker as never, confirmed, 1, 8, undefined, { maxBatchesInFlight: 2 });
    broker.refusing.set('a', 3);
    await relay.accept(commit(10n, 'a'));
    await relay.accept(commit(20n, 'b'));
    await relay.accept(commit(30n, 'a'));
    await relay.accept(commit(40n, 'c'));
    await settled(() => confirmed.at(-1) === 40n);
    expect(broker.published.filter((id) => id === '10-0' || id === '30-0')).toEqual(['10-0', '30-0']);
    expect(broker.published.indexOf('20-0')).toBeLessThan(broker.published.indexOf('10-0'));
    await relay.stop();
  });
});
