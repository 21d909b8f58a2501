import { PoisonPolicy } from './poison-policy';
import type { PoisonFailure, PoisonRecord, PoisonStore } from './poison.port';

/** The counting rule of the SQL stores, in memory: the policy's decisions are what is under test. */
class CountingStore implements Partial<PoisonStore<never>> {
  readonly records = new Map<string, PoisonRecord>();
  down = false;

  async countFailure(failure: PoisonFailure, setAsideAt: number): Promise<PoisonRecord> {
    if (this.down) throw new Error('connect ECONNREFUSED');
    const known = this.records.get(failure.key);
    const attempts = (known?.attempts ?? 0) + 1;
    const record: PoisonRecord = {
      consumer: failure.consumer, key: failure.key, messageId: failure.messageId ?? null, raw: failure.raw, truncated: failure.truncated, reason: failure.reason,
      attempts, state: known?.state === 'set-aside' || attempts >= setAsideAt ? 'set-aside' : 'failing', firstFailedAt: '', lastFailedAt: '',
    };
    this.records.set(failure.key, record);
    return record;
  }
}

describe('PoisonPolicy', () => {
  const setUp = (maxAttempts = 3) => {
    const store = new CountingStore();
    return { store, policy: new PoisonPolicy(store as unknown as PoisonStore<never>, { maxAttempts, maxStoredChars: 1_000 }) };
  };

  it('lets the broker redeliver until maxAttempts, then sets the message aside', async () => {
    const { policy } = setUp(3);
    expect(await policy.failed('c', 'm-1', { id: 'm-1' }, new Error('boom'))).toBeUndefined();
    expect(await policy.failed('c', 'm-1', { id: 'm-1' }, new Error('boom'))).toBeUndefined();
    expect(await policy.failed('c', 'm-1', { id: 'm-1' }, new Error('boom'))).toMatchObject({ state: 'set-aside', attempts: 3, reason: 'handler failed: boom' });
  });

  it('sets an undecodable message aside at once, escaping control characters in its reason', async () => {
    const { policy } = setUp(3);
    expect(await policy.undecodable('c', 'x', 'bad\u0000')).toMatchObject({ state: 'set-aside', attempts: 1, reason: 'bad\\u0000', messageId: null, raw: '"x"' });
  });

  it('does not count a failure it cannot record: a database outage never sets messages aside', async () => {
    const { policy, store } = setUp(1);
    store.down = true;
    expect(await policy.failed('c', 'm-1', { id: 'm-1' }, new Error('connection terminated'))).toBeUndefined();
    expect(store.records.size).toBe(0);
  });
});
