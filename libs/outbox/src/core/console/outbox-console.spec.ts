import type { OutboxMaintenanceStore } from '../outbox-maintenance.port';
import { ConsoleError } from './console.error';
import { OutboxConsole } from './outbox-console';
import type { MessageFilter, OutboxConsoleStore } from './outbox-console.port';

/** Dead rows at positions 1..n; records every bulk statement it is asked for. */
function deadRows(n: number) {
  const dead = new Set(Array.from({ length: n }, (_, i) => i + 1));
  const batches: Array<{ after: string; limit: number; filter: MessageFilter }> = [];
  const take = async (filter: MessageFilter, after: string, limit: number) => {
    batches.push({ after, limit, filter });
    const picked = [...dead].filter((p) => p > Number(after)).slice(0, limit);
    picked.forEach((p) => dead.delete(p));
    return picked.map(String);
  };
  const store = { count: async () => dead.size, requeueBatch: take, discardBatch: take } as unknown as OutboxConsoleStore;
  return { store, batches, dead };
}

const maintenance = {} as OutboxMaintenanceStore;

describe('OutboxConsole bulk actions', () => {
  it('changes matching dead rows in batches of bounded size, walking forward by position', async () => {
    const rows = deadRows(1_000);
    const outcome = await new OutboxConsole(rows.store, maintenance, 200).bulkRequeue({ destination: 'invoices' }, false);
    expect(outcome).toEqual({ matched: 1_000, changed: 1_000, dryRun: false });
    expect(rows.batches.map((b) => b.after)).toEqual(['0', '200', '400', '600', '800', '1000']);
    expect(rows.batches.every((b) => b.limit === 200 && b.filter.status === 'dead' && b.filter.destination === 'invoices')).toBe(true);
  });

  it('only counts on a dry run', async () => {
    const rows = deadRows(30);
    expect(await new OutboxConsole(rows.store, maintenance, 200).bulkDiscard({ type: 'x' }, true)).toEqual({ matched: 30, changed: 0, dryRun: true });
    expect(rows.batches).toEqual([]);
    expect(rows.dead.size).toBe(30);
  });

  it('refuses a bulk action without a filter, or on rows that are not dead', async () => {
    const rows = deadRows(3);
    const console = new OutboxConsole(rows.store, maintenance);
    await expect(console.bulkRequeue({}, false)).rejects.toMatchObject({ kind: 'invalid', field: 'filter' });
    await expect(console.bulkRequeue({ status: 'dead' }, false)).rejects.toBeInstanceOf(ConsoleError);
    await expect(console.bulkDiscard({ status: 'published', type: 'x' }, false)).rejects.toMatchObject({ kind: 'invalid', field: 'status' });
    expect(rows.dead.size).toBe(3);
  });
});

describe('OutboxConsole retry now and pause', () => {
  const store = (overrides: Partial<OutboxConsoleStore>) => ({ count: async () => 0, ...overrides }) as unknown as OutboxConsoleStore;

  it('retries by filter only rows in backoff, and needs a narrowing filter', async () => {
    const asked: MessageFilter[] = [];
    const console = new OutboxConsole(store({ count: async (f) => (asked.push(f), 0) }), maintenance);
    await console.bulkRetryNow({ destination: 'invoices' }, true);
    expect(asked).toEqual([{ destination: 'invoices', status: 'pending', retrying: true }]);
    await expect(console.bulkRetryNow({}, false)).rejects.toMatchObject({ kind: 'invalid', field: 'filter' });
    await expect(console.bulkRetryNow({ status: 'dead', type: 'x' }, false)).rejects.toMatchObject({ kind: 'invalid', field: 'status' });
  });

  it('says why one row cannot be retried now: missing (not-found) or not in backoff (conflict)', async () => {
    const detail = { id: 'a', status: 'published', attempts: 1, nextAttemptAt: null };
    const console = new OutboxConsole(store({ retryNowBatch: async () => [], get: async (id) => (id === 'a' ? detail : undefined) as never }), maintenance);
    await expect(console.retryNow('b')).rejects.toMatchObject({ kind: 'not-found' });
    await expect(console.retryNow('a')).rejects.toMatchObject({ kind: 'conflict', message: expect.stringContaining('not waiting in backoff (status published') });
  });

  it.each([
    ['orders\u0000', /"orders\\u0000", is refused: it contains the control character U\+0000 at index 6/],
    ['', /"", is refused: it is empty/],
    ['x'.repeat(256), /it has 256 characters, more than 255/],
  ])('refuses to pause or resume the destination %j before any statement, naming it and what is allowed', async (destination, problem) => {
    const statements: string[] = [];
    const console = new OutboxConsole(
      store({ destinationUsed: async () => (statements.push('used'), true), pause: async () => (statements.push('pause'), true), resume: async () => (statements.push('resume'), true) }),
      maintenance,
    );
    await expect(console.pause(destination, { confirmUnknown: true })).rejects.toMatchObject({ kind: 'invalid', field: 'destination', message: expect.stringMatching(problem) });
    await expect(console.resume(destination)).rejects.toMatchObject({ kind: 'invalid', field: 'destination', message: expect.stringMatching(/The destination to resume, .* A destination is a non-blank string of at most 255 characters, without control characters/) });
    expect(statements).toEqual([]);
  });

  it('refuses to pause a destination no row has used unless confirmed, and keeps the reason', async () => {
    const paused: Array<[string, string | null]> = [];
    const console = new OutboxConsole(
      store({ destinationUsed: async (d) => d === 'orders', pause: async (d, reason) => (paused.push([d, reason]), true) }),
      maintenance,
    );
    await expect(console.pause('ordres')).rejects.toMatchObject({ kind: 'invalid', field: 'confirmUnknown', message: expect.stringContaining('"ordres"') });
    expect(paused).toEqual([]);
    await console.pause('ordres', { confirmUnknown: true });
    await console.pause('orders', { reason: '  partner maintenance until 14:00 ' });
    expect(paused).toEqual([['ordres', null], ['orders', 'partner maintenance until 14:00']]);
  });
});
