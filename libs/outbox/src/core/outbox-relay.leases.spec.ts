import type { OutboxTransport } from './outbox-transport.port';
import { message, relay, relayBench } from './outbox-relay.fixtures';

describe('OutboxRelay: leases, relays side by side, and shutdown', () => {
  const bench = relayBench();

  it('on a shutdown that cannot wait, marks what the broker acknowledged published before giving back the rest', async () => {
    const rows = [message('a'), message('a'), message('b')];
    bench.store.add(rows);
    const hanging: OutboxTransport = {
      name: 'hanging',
      publish: (outgoing) => (outgoing.envelope.id === rows[1].id ? new Promise(() => undefined) : Promise.resolve()),
    };
    // A short publish timeout, so that the hung publish lets go of the process soon after the test.
    const subject = relay(bench.store, hanging, { publishTimeoutMs: 200 });
    const draining = subject.trigger();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await subject.stop(10);
    expect(bench.store.rows.map((row) => [row.status, row.leaseToken ?? null])).toEqual([
      ['published', null],
      ['pending', null],
      ['published', null],
    ]);
    await draining;
    // The late outcome of the hung row changes nothing: its lease went back at the stop.
    expect(bench.store.rows[1]).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('never publishes the same row twice when two relays run side by side', async () => {
    bench.store.add(Array.from({ length: 50 }, (_, i) => message(`agg-${i % 7}`)));
    const a = relay(bench.store, bench.transport, { owner: 'relay-a', batchSize: 3 });
    const b = relay(bench.store, bench.transport, { owner: 'relay-b', batchSize: 3 });
    await Promise.all([a.trigger(), b.trigger(), a.trigger(), b.trigger()]);
    const ids = bench.transport.delivered.map((m) => m.envelope.id);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
  });

  it('reclaims a row whose lease expired (a crashed relay)', async () => {
    bench.store.add([message('a')]);
    await bench.store.claim({ owner: 'crashed', token: 'crashed-claim', limit: 10, leaseMs: 30_000 });
    const subject = relay(bench.store, bench.transport);
    expect((await subject.publishBatch()).claimed).toBe(0);
    bench.now += 30_000;
    expect(await subject.publishBatch()).toMatchObject({ claimed: 1, published: 1 });
  });

  it('does not let a relay whose lease was taken over overwrite the new holder, even with the same relay id', async () => {
    bench.store.add([message('a')]);
    await bench.store.claim({ owner: 'relay-1', token: 'stalled-claim', limit: 10, leaseMs: 1_000 });
    bench.now += 1_000;
    await bench.store.claim({ owner: 'relay-1', token: 'successor-claim', limit: 10, leaseMs: 30_000 });
    expect(await bench.store.markFailed('stalled-claim', [{ position: '1', error: 'late', retryInMs: null }])).toBe(0);
    expect(await bench.store.markPublished('stalled-claim', ['1'])).toBe(0);
    expect(bench.store.rows[0]).toMatchObject({ status: 'pending', leaseToken: 'successor-claim' });
    expect(await bench.store.markPublished('successor-claim', ['1'])).toBe(1);
  });

  it('on stop, waits for the batch in flight and releases what it still holds', async () => {
    bench.store.add([message('a'), message('b')]);
    const claimed = await bench.store.claim({ owner: 'relay-a', token: 'relay-a-claim', limit: 1, leaseMs: 30_000 });
    expect(claimed).toHaveLength(1);
    await relay(bench.store, bench.transport).stop(100);
    expect(bench.store.rows[0]).toMatchObject({ leaseOwner: undefined, attempts: 0 });
  });
});
