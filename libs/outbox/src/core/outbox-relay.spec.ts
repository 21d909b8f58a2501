import type { OutboxTransport } from './outbox-transport.port';
import { message, messagesMade, RecordingTransport, relay, relayBench } from './outbox-relay.fixtures';

describe('OutboxRelay: publishing, in order per aggregate, through the transport each row names', () => {
  const bench = relayBench();

  it('publishes claimed rows with key and envelope headers, then marks them published', async () => {
    bench.store.add([message('a'), message('b')]);
    const outcome = await relay(bench.store, bench.transport).publishBatch();
    expect(outcome).toEqual({ claimed: 2, published: 2, retried: 0, dead: 0 });
    expect(bench.store.rows.map((row) => row.status)).toEqual(['published', 'published']);
    expect(bench.transport.delivered[0]).toMatchObject({
      destination: 'things',
      key: 'a',
      headers: { 'outbox-event-type': 'thing.happened', 'outbox-aggregate-id': 'a', 'outbox-message-id': 'm-' + (messagesMade() - 1) },
      envelope: { aggregateType: 'thing', payload: { n: messagesMade() - 1 } },
    });
  });

  it('claims runs of an aggregate from its first unpublished row, oldest first, and nothing behind a row it cannot take', async () => {
    bench.store.add([message('a'), message('a'), message('b'), message('a')]);
    expect((await bench.store.claim({ owner: 'x', token: 'x-1', limit: 1, leaseMs: 1_000 })).map((row) => row.position)).toEqual(['1']);
    // Row 1 is leased: the rest of aggregate a waits, b does not.
    expect((await bench.store.claim({ owner: 'x', token: 'x-2', limit: 10, leaseMs: 1_000 })).map((row) => row.position)).toEqual(['3']);
    await bench.store.release('x');
    const claimed = await bench.store.claim({ owner: 'x', token: 'x-3', limit: 10, leaseMs: 1_000 });
    expect(claimed.map((row) => [row.aggregateId, row.position])).toEqual([['a', '1'], ['a', '2'], ['b', '3'], ['a', '4']]);
  });

  it('publishes the rows of one aggregate in a batch one after another, never two at once', async () => {
    const rows = [message('a'), message('b'), message('a'), message('a'), message('b')];
    bench.store.add(rows);
    const inFlight = new Map<string, number>();
    let overlapped = false;
    const slow: OutboxTransport = {
      name: 'slow',
      async publish(outgoing) {
        inFlight.set(outgoing.key, (inFlight.get(outgoing.key) ?? 0) + 1);
        overlapped ||= (inFlight.get(outgoing.key) ?? 0) > 1;
        await new Promise((resolve) => setImmediate(resolve));
        inFlight.set(outgoing.key, (inFlight.get(outgoing.key) ?? 0) - 1);
        bench.transport.delivered.push(outgoing);
      },
    };
    expect(await relay(bench.store, slow).publishBatch()).toEqual({ claimed: 5, published: 5, retried: 0, dead: 0 });
    expect(overlapped).toBe(false);
    expect(bench.transport.delivered.filter((m) => m.key === 'a').map((m) => m.envelope.id)).toEqual([rows[0].id, rows[2].id, rows[3].id]);
  });

  it('gives back the rows behind a failure in its aggregate unsent and uncharged, while other aggregates publish', async () => {
    const rows = [message('a'), message('a'), message('b'), message('a')];
    bench.store.add(rows);
    bench.transport.failNext.set(rows[1].id, 1);
    expect(await relay(bench.store, bench.transport).publishBatch()).toEqual({ claimed: 4, published: 2, retried: 1, dead: 0 });
    expect(bench.transport.delivered.map((m) => m.envelope.id)).toEqual([rows[0].id, rows[2].id]);
    expect(bench.store.rows.map((row) => [row.status, row.attempts, row.leaseToken ?? null, row.lastError ?? null])).toEqual([
      ['published', 1, null, null],
      ['pending', 1, null, `broker refused ${rows[1].id}`],
      ['published', 1, null, null],
      ['pending', 0, null, null],
    ]);
  });

  it('hands a whole run to a transport that keeps key order within a batch, and gives back what follows a failure', async () => {
    const rows = [message('a'), message('a'), message('a'), message('b')];
    bench.store.add(rows);
    const calls: string[][] = [];
    const ordered: OutboxTransport = {
      name: 'ordered',
      keepsKeyOrderInBatch: true,
      publish: () => Promise.reject(new Error('publishBatch expected')),
      async publishBatch(messages) {
        calls.push(messages.map((m) => m.envelope.id));
        return messages.map((m) => (m.envelope.id === rows[1].id ? new Error('partition leader moved') : undefined));
      },
    };
    expect(await relay(bench.store, ordered).publishBatch()).toEqual({ claimed: 4, published: 2, retried: 1, dead: 0 });
    expect(calls).toEqual([rows.map((row) => row.id)]);
    // Row 3 was acknowledged but follows the failed row 2: it is not marked published (it goes again after row 2).
    expect(bench.store.rows.map((row) => [row.status, row.attempts])).toEqual([
      ['published', 1],
      ['pending', 1],
      ['pending', 0],
      ['published', 1],
    ]);
  });

  it('keeps per-aggregate order when an early event fails and is retried', async () => {
    const rows = [message('a'), message('a'), message('a'), message('b')];
    bench.store.add(rows);
    bench.transport.failNext.set(rows[0].id, 1);
    const subject = relay(bench.store, bench.transport);

    await subject.trigger();
    expect(bench.transport.delivered.map((m) => m.envelope.id)).toEqual([rows[3].id]);
    expect(bench.store.rows[0]).toMatchObject({ status: 'pending', attempts: 1, lastError: `broker refused ${rows[0].id}`, nextAttemptAt: bench.now + 1_000 });

    bench.now += 1_000;
    await subject.trigger();
    const order = bench.transport.delivered.filter((m) => m.key === 'a').map((m) => m.envelope.id);
    expect(order).toEqual(rows.slice(0, 3).map((row) => row.id));
  });

  it('sends a batch through publishBatch and marks only the failed messages for retry', async () => {
    const batches: string[][] = [];
    const batching: OutboxTransport = {
      name: 'batching',
      publish: async () => {
        throw new Error('publish() must not be used when publishBatch exists');
      },
      publishBatch: async (messages) => {
        batches.push(messages.map((m) => m.key));
        return messages.map((m) => (m.key === 'b' ? new Error('partition offline') : undefined));
      },
    };
    bench.store.add([message('a'), message('b'), message('c')]);
    const outcome = await relay(bench.store, batching).publishBatch();
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(outcome).toEqual({ claimed: 3, published: 2, retried: 1, dead: 0 });
    expect(bench.store.rows.map((row) => [row.status, row.lastError])).toEqual([
      ['published', undefined],
      ['pending', 'partition offline'],
      ['published', undefined],
    ]);
  });

  it('publishes each row through the transport it names; one destination being down does not hold back another', async () => {
    const partner = new RecordingTransport();
    const internal = new RecordingTransport();
    const toPartner = { ...message('a'), transport: 'partner', destination: 'partner.things' };
    const laterInternal = message('a');
    const laterPartner = { ...message('a'), transport: 'partner', destination: 'partner.things' };
    bench.store.add([message('a'), toPartner, laterInternal, laterPartner, { ...message('z'), transport: 'gone' }]);
    internal.failNext.set(bench.store.rows[0].message.id, 5);
    const subject = relay(bench.store, internal, { transports: new Map<string, OutboxTransport>([['default', internal], ['partner', partner]]) });
    await subject.trigger();
    expect(partner.delivered.map((m) => m.envelope.id)).toEqual([toPartner.id, laterPartner.id]);
    expect(internal.delivered).toHaveLength(0);
    expect(bench.store.rows[4]).toMatchObject({ status: 'pending', lastError: expect.stringContaining('No transport named "gone"') });
  });
});
