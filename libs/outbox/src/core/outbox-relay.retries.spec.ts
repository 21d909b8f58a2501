import { message, relay, relayBench } from './outbox-relay.fixtures';

describe('OutboxRelay: failed attempts, retries and dead rows', () => {
  const bench = relayBench();

  it('turns a row dead after max attempts and keeps its error, while other aggregates flow', async () => {
    const [poison, other] = [message('a'), message('b')];
    bench.store.add([poison, other]);
    bench.transport.failNext.set(poison.id, 99);
    const subject = relay(bench.store, bench.transport);
    for (let round = 0; round < 3; round++) {
      await subject.trigger();
      bench.now += 60_000;
    }
    expect(bench.store.rows[0]).toMatchObject({ status: 'dead', attempts: 3, lastError: `broker refused ${poison.id}` });
    expect(bench.transport.delivered.map((m) => m.envelope.id)).toEqual([other.id]);
  });

  it('dead-letters, unpublished and alone, a row whose relays crashed on it maxAttempts times', async () => {
    bench.store.add([message('poison'), message('healthy')]);
    for (let crash = 1; crash <= 3; crash++) {
      await bench.store.claim({ owner: `crashed-${crash}`, token: `crashed-${crash}`, limit: 1, leaseMs: 1_000 });
      bench.now += 1_000;
    }
    expect(await relay(bench.store, bench.transport).publishBatch()).toEqual({ claimed: 2, published: 1, retried: 0, dead: 1 });
    expect(bench.store.rows[0]).toMatchObject({ status: 'dead', attempts: 4 });
    expect(bench.store.rows[0].lastError).toMatch(/claimed 4 times, over "maxAttempts" \(3\), without an outcome/);
    expect(bench.transport.delivered.map((m) => m.key)).toEqual(['healthy']);
  });

  it('records a publish that is never acknowledged as a failed attempt', async () => {
    bench.store.add([message('a')]);
    bench.transport.hang = true;
    const outcome = await relay(bench.store, bench.transport, { publishTimeoutMs: 20 }).publishBatch();
    expect(outcome).toMatchObject({ claimed: 1, retried: 1 });
    expect(bench.store.rows[0].lastError).toMatch(/no acknowledgement within publishTimeoutMs \(20 ms\)/);
  });

  it('wakes itself when the earliest retry comes due, without waiting for a poll', async () => {
    jest.useFakeTimers();
    try {
      const row = message('a');
      bench.store.add([row]);
      bench.transport.failNext.set(row.id, 1);
      const subject = relay(bench.store, bench.transport);
      await subject.trigger();
      expect(bench.store.rows[0]).toMatchObject({ status: 'pending', nextAttemptAt: bench.now + 1_000 });
      bench.now += 1_000;
      await jest.advanceTimersByTimeAsync(1_000);
      expect(bench.store.rows[0].status).toBe('pending'); // the wake-up comes a few milliseconds after the due time
      await jest.advanceTimersByTimeAsync(10);
      expect(bench.store.rows[0].status).toBe('published');
      await subject.stop(10);
    } finally {
      jest.useRealTimers();
    }
  });
});
