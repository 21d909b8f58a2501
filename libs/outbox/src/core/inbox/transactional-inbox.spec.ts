import { OutboxConfigurationError, OutboxWriteError } from '../outbox.errors';
import { PoisonPolicy } from '../poison/poison-policy';
import type { PoisonFailure, PoisonRecord, PoisonStore } from '../poison/poison.port';
import { TransactionalInbox } from './transactional-inbox';

/** A transaction that logs how it ended; marks live in a set and are dropped on rollback, as a database would. */
interface FakeTx {
  id: number;
  marks: string[];
}

function setUp(withPolicy: boolean) {
  const log: string[] = [];
  const committed = new Set<string>();
  let next = 0;
  const open = async <R>(work: (tx: FakeTx) => Promise<R>): Promise<R> => {
    const tx = { id: ++next, marks: [] as string[] };
    log.push(`begin ${tx.id}`);
    try {
      const result = await work(tx);
      tx.marks.forEach((mark) => committed.add(mark));
      log.push(`commit ${tx.id}`);
      return result;
    } catch (error) {
      log.push(`rollback ${tx.id}`);
      throw error;
    }
  };
  const marker = {
    mark: async (tx: FakeTx, consumer: string, messageId: string) => {
      const key = `${consumer}/${messageId}`;
      if (committed.has(key)) return false;
      tx.marks.push(key);
      return true;
    },
  };
  const store: Partial<PoisonStore<FakeTx>> = {
    countFailure: async (failure: PoisonFailure) => {
      log.push(`count ${failure.key}`);
      return { consumer: failure.consumer, key: failure.key, messageId: failure.messageId ?? null, raw: failure.raw, truncated: false, reason: failure.reason, attempts: 1, state: 'set-aside', firstFailedAt: '', lastFailedAt: '' } as PoisonRecord;
    },
  };
  const policy = withPolicy ? new PoisonPolicy(store as PoisonStore<FakeTx>, { maxAttempts: 1, maxStoredChars: 1_000 }) : undefined;
  return { log, inbox: new TransactionalInbox<FakeTx>(marker, open, policy) };
}

describe('TransactionalInbox', () => {
  it('runs the work in the transaction it opened, which transaction() returns there and nowhere else', async () => {
    const { inbox } = setUp(false);
    const outcome = await inbox.process('m-1', 'billing', (tx) => ({ given: tx.id, ambient: inbox.transaction().id }));
    expect(outcome).toEqual({ duplicate: false, result: { given: 1, ambient: 1 } });
    expect(() => inbox.transaction()).toThrow(OutboxWriteError);
    expect(await inbox.process('m-1', 'billing', () => 'again')).toEqual({ duplicate: true });
  });

  it('counts a failure under the poison policy only after its transaction rolled back, and acknowledges it', async () => {
    const { inbox, log } = setUp(true);
    const outcome = await inbox.process('m-2', 'billing', () => {
      throw new Error('boom');
    });
    expect(outcome.setAside).toMatchObject({ key: 'm-2', reason: 'handler failed: boom' });
    expect(log).toEqual(['begin 1', 'rollback 1', 'count m-2']);
  });

  it('without the policy, rethrows a failing work and refuses a message without a usable id', async () => {
    const { inbox, log } = setUp(false);
    await expect(inbox.process({ id: 'm-3' }, 'billing', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(inbox.process({ id: '' } as { id: string }, 'billing', () => undefined)).rejects.toThrow(OutboxConfigurationError);
    expect(log).toEqual(['begin 1', 'rollback 1']);
  });
});
