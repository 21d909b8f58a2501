import { InMemoryOutboxStore } from './in-memory-outbox.store';
import type { NewOutboxMessage, OutgoingMessage } from './outbox-message';
import { OutboxRelay, type OutboxRelayConfig } from './outbox-relay';
import type { OutboxTransport } from './outbox-transport.port';
import { RetryPolicy } from './retry-policy';

let sequence = 0;
function message(aggregateId: string, type = 'thing.happened'): NewOutboxMessage {
  sequence += 1;
  return {
    id: `m-${sequence}`,
    type,
    version: 1,
    aggregateType: 'thing',
    aggregateId,
    transport: 'default',
    destination: 'things',
    occurredAt: new Date(0),
    headers: {},
    payloadJson: JSON.stringify({ n: sequence }),
  };
}

class RecordingTransport implements OutboxTransport {
  readonly name = 'recording';
  readonly delivered: OutgoingMessage[] = [];
  failNext = new Map<string, number>();
  hang = false;

  async publish(outgoing: OutgoingMessage): Promise<void> {
    if (this.hang) return new Promise(() => undefined);
    const failures = this.failNext.get(outgoing.envelope.id) ?? 0;
    if (failures > 0) {
      this.failNext.set(outgoing.envelope.id, failures - 1);
      throw new Error(`broker refused ${outgoing.envelope.id}`);
    }
    this.delivered.push(outgoing);
  }
}

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

function relay(store: InMemoryOutboxStore, transport: OutboxTransport, overrides: Partial<OutboxRelayConfig> = {}): OutboxRelay {
  return new OutboxRelay({
    store,
    transports: new Map([['default', transport]]),
    retryPolicy: new RetryPolicy(3, { initialMs: 1_000, maxMs: 10_000, jitter: 0 }),
    owner: 'relay-a',
    batchSize: 10,
    leaseMs: 30_000,
    publishTimeoutMs: 5_000,
    logger: silent,
    ...overrides,
  });
}

describe('OutboxRelay', () => {
  let now: number;
  let store: InMemoryOutboxStore;
  let transport: RecordingTransport;

  beforeEach(() => {
    now = 1_000_000;
    store = new InMemoryOutboxStore(() => now);
    transport = new RecordingTransport();
  });

  it('publishes claimed rows with key and envelope headers, then marks them published', async () => {
    store.add([message('a'), message('b')]);
    const outcome = await relay(store, transport).publishBatch();
    expect(outcome).toEqual({ claimed: 2, published: 2, retried: 0, dead: 0 });
    expect(store.rows.map((row) => row.status)).toEqual(['published', 'published']);
    expect(transport.delivered[0]).toMatchObject({
      destination: 'things',
      key: 'a',
      headers: { 'outbox-event-type': 'thing.happened', 'outbox-aggregate-id': 'a', 'outbox-message-id': 'm-' + (sequence - 1) },
      envelope: { aggregateType: 'thing', payload: { n: sequence - 1 } },
    });
  });

  it('claims runs of an aggregate from its first unpublished row, oldest first, and nothing behind a row it cannot take', async () => {
    store.add([message('a'), message('a'), message('b'), message('a')]);
    expect((await store.claim({ owner: 'x', token: 'x-1', limit: 1, leaseMs: 1_000 })).map((row) => row.position)).toEqual(['1']);
    // Row 1 is leased: the rest of aggregate a waits, b does not.
    expect((await store.claim({ owner: 'x', token: 'x-2', limit: 10, leaseMs: 1_000 })).map((row) => row.position)).toEqual(['3']);
    await store.release('x');
    const claimed = await store.claim({ owner: 'x', token: 'x-3', limit: 10, leaseMs: 1_000 });
    expect(claimed.map((row) => [row.aggregateId, row.position])).toEqual([['a', '1'], ['a', '2'], ['b', '3'], ['a', '4']]);
  });

  it('publishes the rows of one aggregate in a batch one after another, never two at once', async () => {
    const rows = [message('a'), message('b'), message('a'), message('a'), message('b')];
    store.add(rows);
    const inFlight = new Map<string, number>();
    let overlapped = false;
    const slow: OutboxTransport = {
      name: 'slow',
      async publish(outgoing) {
        inFlight.set(outgoing.key, (inFlight.get(outgoing.key) ?? 0) + 1);
        overlapped ||= (inFlight.get(outgoing.key) ?? 0) > 1;
        await new Promise((resolve) => setImmediate(resolve));
        inFlight.set(outgoing.key, (inFlight.get(outgoing.key) ?? 0) - 1);
        transport.delivered.push(outgoing);
      },
    };
    expect(await relay(store, slow).publishBatch()).toEqual({ claimed: 5, published: 5, retried: 0, dead: 0 });
    expect(overlapped).toBe(false);
    expect(transport.delivered.filter((m) => m.key === 'a').map((m) => m.envelope.id)).toEqual([rows[0].id, rows[2].id, rows[3].id]);
  });

  it('gives back the rows behind a failure in its aggregate unsent and uncharged, while other aggregates publish', async () => {
    const rows = [message('a'), message('a'), message('b'), message('a')];
    store.add(rows);
    transport.failNext.set(rows[1].id, 1);
    expect(await relay(store, transport).publishBatch()).toEqual({ claimed: 4, published: 2, retried: 1, dead: 0 });
    expect(transport.delivered.map((m) => m.envelope.id)).toEqual([rows[0].id, rows[2].id]);
    expect(store.rows.map((row) => [row.status, row.attempts, row.leaseToken ?? null, row.lastError ?? null])).toEqual([
      ['published', 1, null, null],
      ['pending', 1, null, `broker refused ${rows[1].id}`],
      ['published', 1, null, null],
      ['pending', 0, null, null],
    ]);
  });

  it('on a shutdown that cannot wait, marks what the broker acknowledged published before giving back the rest', async () => {
    const rows = [message('a'), message('a'), message('b')];
    store.add(rows);
    const hanging: OutboxTransport = {
      name: 'hanging',
      publish: (outgoing) => (outgoing.envelope.id === rows[1].id ? new Promise(() => undefined) : Promise.resolve()),
    };
    // A short publish timeout, so that the hung publish lets go of the process soon after the test.
    const subject = relay(store, hanging, { publishTimeoutMs: 200 });
    const draining = subject.trigger();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await subject.stop(10);
    expect(store.rows.map((row) => [row.status, row.leaseToken ?? null])).toEqual([
      ['published', null],
      ['pending', null],
      ['published', null],
    ]);
    await draining;
    // The late outcome of the hung row changes nothing: its lease went back at the stop.
    expect(store.rows[1]).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('hands a whole run to a transport that keeps key order within a batch, and gives back what follows a failure', async () => {
    const rows = [message('a'), message('a'), message('a'), message('b')];
    store.add(rows);
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
    expect(await relay(store, ordered).publishBatch()).toEqual({ claimed: 4, published: 2, retried: 1, dead: 0 });
    expect(calls).toEqual([rows.map((row) => row.id)]);
    // Row 3 was acknowledged but follows the failed row 2: it is not marked published (it goes again after row 2).
    expect(store.rows.map((row) => [row.status, row.attempts])).toEqual([
      ['published', 1],
      ['pending', 1],
      ['pending', 0],
      ['published', 1],
    ]);
  });

  it('keeps per-aggregate order when an early event fails and is retried', async () => {
    const rows = [message('a'), message('a'), message('a'), message('b')];
    store.add(rows);
    transport.failNext.set(rows[0].id, 1);
    const subject = relay(store, transport);

    await subject.trigger();
    expect(transport.delivered.map((m) => m.envelope.id)).toEqual([rows[3].id]);
    expect(store.rows[0]).toMatchObject({ status: 'pending', attempts: 1, lastError: `broker refused ${rows[0].id}`, nextAttemptAt: now + 1_000 });

    now += 1_000;
    await subject.trigger();
    const order = transport.delivered.filter((m) => m.key === 'a').map((m) => m.envelope.id);
    expect(order).toEqual(rows.slice(0, 3).map((row) => row.id));
  });

  it('turns a row dead after max attempts and keeps its error, while other aggregates flow', async () => {
    const [poison, other] = [message('a'), message('b')];
    store.add([poison, other]);
    transport.failNext.set(poison.id, 99);
    const subject = relay(store, transport);
    for (let round = 0; round < 3; round++) {
      await subject.trigger();
      now += 60_000;
    }
    expect(store.rows[0]).toMatchObject({ status: 'dead', attempts: 3, lastError: `broker refused ${poison.id}` });
    expect(transport.delivered.map((m) => m.envelope.id)).toEqual([other.id]);
  });

  it('never publishes the same row twice when two relays run side by side', async () => {
    store.add(Array.from({ length: 50 }, (_, i) => message(`agg-${i % 7}`)));
    const a = relay(store, transport, { owner: 'relay-a', batchSize: 3 });
    const b = relay(store, transport, { owner: 'relay-b', batchSize: 3 });
    await Promise.all([a.trigger(), b.trigger(), a.trigger(), b.trigger()]);
    const ids = transport.delivered.map((m) => m.envelope.id);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
  });

  it('reclaims a row whose lease expired (a crashed relay)', async () => {
    store.add([message('a')]);
    await store.claim({ owner: 'crashed', token: 'crashed-claim', limit: 10, leaseMs: 30_000 });
    const subject = relay(store, transport);
    expect((await subject.publishBatch()).claimed).toBe(0);
    now += 30_000;
    expect(await subject.publishBatch()).toMatchObject({ claimed: 1, published: 1 });
  });

  it('dead-letters, unpublished and alone, a row whose relays crashed on it maxAttempts times', async () => {
    store.add([message('poison'), message('healthy')]);
    for (let crash = 1; crash <= 3; crash++) {
      await store.claim({ owner: `crashed-${crash}`, token: `crashed-${crash}`, limit: 1, leaseMs: 1_000 });
      now += 1_000;
    }
    expect(await relay(store, transport).publishBatch()).toEqual({ claimed: 2, published: 1, retried: 0, dead: 1 });
    expect(store.rows[0]).toMatchObject({ status: 'dead', attempts: 4 });
    expect(store.rows[0].lastError).toMatch(/claimed 4 times, over "maxAttempts" \(3\), without an outcome/);
    expect(transport.delivered.map((m) => m.key)).toEqual(['healthy']);
  });

  it('records a publish that is never acknowledged as a failed attempt', async () => {
    store.add([message('a')]);
    transport.hang = true;
    const outcome = await relay(store, transport, { publishTimeoutMs: 20 }).publishBatch();
    expect(outcome).toMatchObject({ claimed: 1, retried: 1 });
    expect(store.rows[0].lastError).toMatch(/no acknowledgement within publishTimeoutMs \(20 ms\)/);
  });

  it('does not let a relay whose lease was taken over overwrite the new holder, even with the same relay id', async () => {
    store.add([message('a')]);
    await store.claim({ owner: 'relay-1', token: 'stalled-claim', limit: 10, leaseMs: 1_000 });
    now += 1_000;
    await store.claim({ owner: 'relay-1', token: 'successor-claim', limit: 10, leaseMs: 30_000 });
    expect(await store.markFailed('stalled-claim', [{ position: '1', error: 'late', retryInMs: null }])).toBe(0);
    expect(await store.markPublished('stalled-claim', ['1'])).toBe(0);
    expect(store.rows[0]).toMatchObject({ status: 'pending', leaseToken: 'successor-claim' });
    expect(await store.markPublished('successor-claim', ['1'])).toBe(1);
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
    store.add([message('a'), message('b'), message('c')]);
    const outcome = await relay(store, batching).publishBatch();
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(outcome).toEqual({ claimed: 3, published: 2, retried: 1, dead: 0 });
    expect(store.rows.map((row) => [row.status, row.lastError])).toEqual([
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
    store.add([message('a'), toPartner, laterInternal, laterPartner, { ...message('z'), transport: 'gone' }]);
    internal.failNext.set(store.rows[0].message.id, 5);
    const subject = relay(store, internal, { transports: new Map<string, OutboxTransport>([['default', internal], ['partner', partner]]) });
    await subject.trigger();
    expect(partner.delivered.map((m) => m.envelope.id)).toEqual([toPartner.id, laterPartner.id]);
    expect(internal.delivered).toHaveLength(0);
    expect(store.rows[4]).toMatchObject({ status: 'pending', lastError: expect.stringContaining('No transport named "gone"') });
  });

  it('wakes itself when the earliest retry comes due, without waiting for a poll', async () => {
    jest.useFakeTimers();
    try {
      const row = message('a');
      store.add([row]);
      transport.failNext.set(row.id, 1);
      const subject = relay(store, transport);
      await subject.trigger();
      expect(store.rows[0]).toMatchObject({ status: 'pending', nextAttemptAt: now + 1_000 });
      now += 1_000;
      await jest.advanceTimersByTimeAsync(1_000);
      expect(store.rows[0].status).toBe('pending'); // the wake-up comes a few milliseconds after the due time
      await jest.advanceTimersByTimeAsync(10);
      expect(store.rows[0].status).toBe('published');
      await subject.stop(10);
    } finally {
      jest.useRealTimers();
    }
  });

  it('on stop, waits for the batch in flight and releases what it still holds', async () => {
    store.add([message('a'), message('b')]);
    const claimed = await store.claim({ owner: 'relay-a', token: 'relay-a-claim', limit: 1, leaseMs: 30_000 });
    expect(claimed).toHaveLength(1);
    await relay(store, transport).stop(100);
    expect(store.rows[0]).toMatchObject({ leaseOwner: undefined, attempts: 0 });
  });
});
