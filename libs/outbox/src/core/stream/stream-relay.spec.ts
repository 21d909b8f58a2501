import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { OUTBOX_CHANNELS, type OutboxPublishedEvent } from '../observe/outbox.channels';
import { commit, FakeBroker, relayOn, settled } from './stream-relay.fixtures';

describe('StreamRelay: publishing in commit order, confirming what was acknowledged', () => {
  it('publishes in commit order and confirms each commit after its acknowledgement', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed);
    await relay.accept(commit(10n, 'a', 'b'));
    await relay.accept(commit(20n, 'a'));
    await relay.accept(commit(30n));
    await settled(() => confirmed.at(-1) === 30n);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0', '10-1', '20-0']);
    await relay.stop();
  });

  it('keeps a failed message and those behind it, retries them, and confirms nothing past them meanwhile', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 10);
    const attempts = jest.spyOn(broker, 'publish');
    broker.refuse = Number.MAX_SAFE_INTEGER;
    await relay.accept(commit(10n, 'a'));
    await relay.accept(commit(20n, 'a'));
    await settled(() => attempts.mock.calls.length >= 5);
    // While 10-0 fails: retried, 20-0 (same aggregate) never tried past it, and no commit confirmed.
    expect(new Set(attempts.mock.calls.map(([outgoing]) => outgoing.envelope.id))).toEqual(new Set(['10-0']));
    expect(confirmed).toEqual([]);
    broker.refuse = 0;
    await settled(() => confirmed.includes(20n));
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0', '20-0']);
    await relay.stop();
  });

  it('decodes ahead while a batch is in flight, up to maxBuffered, then holds the reader back', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 2, 4);
    broker.hold();
    await relay.accept(commit(1n, 'a', 'b'));
    await relay.accept(commit(2n, 'c', 'd'));
    let third = false;
    const accepting = relay.accept(commit(3n, 'e', 'f', 'g')).then(() => (third = true));
    // Give the relay every chance to take the third commit in: it must still be held.
    for (let i = 0; i < 100; i++) await new Promise((resolve) => setImmediate(resolve));
    // Batch 1 in flight, 5 waiting: the reader is held until the buffer drains below 4.
    expect(third).toBe(false);
    expect(confirmed).toEqual([]);
    broker.release();
    await accepting;
    await settled(() => confirmed.at(-1) === 3n);
    expect(broker.published).toHaveLength(7);
    await relay.stop();
  });

  it('confirms nothing that was not acknowledged when stopped mid-batch', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 1);
    await relay.accept(commit(1n, 'a'));
    await settled(() => confirmed.includes(1n));
    broker.refuse = Number.MAX_SAFE_INTEGER;
    await relay.accept(commit(2n, 'a'));
    await relay.stop();
    expect(confirmed).toEqual([1n]);
  });

  it('confirms the server position it is told of when nothing is outstanding, and never while something is', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed);
    expect(await relay.caughtUp(50n)).toBe(true);
    expect(confirmed).toEqual([50n]);
    broker.hold();
    await relay.accept(commit(60n, 'a'));
    expect(await relay.caughtUp(70n)).toBe(false);
    expect(confirmed).toEqual([50n]);
    broker.release();
    await settled(() => confirmed.at(-1) === 60n);
    await relay.stop();
  });

  it('tells the diagnostics channel of each acknowledged message, as the table relay does', async () => {
    const heard: string[] = [];
    const listener = (event: unknown) => heard.push((event as OutboxPublishedEvent).message.id);
    subscribe(OUTBOX_CHANNELS.published, listener);
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed);
    try {
      await relay.accept(commit(10n, 'a', 'b'));
      await settled(() => confirmed.at(-1) === 10n);
      expect(heard).toEqual(['10-0', '10-1']);
    } finally {
      unsubscribe(OUTBOX_CHANNELS.published, listener);
      await relay.stop();
    }
  });
});
