import { randomUUID } from 'node:crypto';
import type { ClaimedMessage, NewOutboxMessage, OutboxStore } from '@nest-outbox/outbox/core';
import type { StoreUnderTest } from '@nest-outbox/outbox/testing';
import { contractMessage } from '../libs/outbox/src/testing/contracts/contract-messages';
import { sqlStoreSubject } from './support/sql-store.subject';
import { waitFor } from './support/wait-for';

/**
 * PostgreSQL settles a batch and makes the next claim in one statement: a busy aggregate's next
 * run is leased as its previous one is marked published. What must hold: only rows the claim still
 * holds are marked, and a row it could not mark (its lease was taken over) keeps its key back.
 */
describe('settle and claim in one statement on postgres', () => {
  let underTest: StoreUnderTest;
  let store: OutboxStore;

  beforeEach(async () => {
    underTest = await sqlStoreSubject('postgres').createStore();
    store = underTest.store;
  });

  afterEach(async () => {
    await underTest?.close();
  });

  const claim = (limit: number, leaseMs = 60_000) => store.claim({ owner: 'relay-a', token: randomUUID(), limit, leaseMs });
  const next = (limit: number) => ({ owner: 'relay-a', token: randomUUID(), limit, leaseMs: 60_000 });
  const idsOf = (messages: Array<ClaimedMessage | NewOutboxMessage>) => messages.map((message) => message.id);
  const positionsOf = (messages: ClaimedMessage[]) => messages.map((message) => message.position);

  it("marks the batch published and leases its aggregate's next run, which a claim alone could not take", async () => {
    const hot = Array.from({ length: 5 }, () => contractMessage({ aggregateId: 'hot' }));
    const other = contractMessage({ aggregateId: 'other' });
    await underTest.write([...hot, other]);
    const first = await store.claim({ owner: 'relay-a', token: 'aaaaaaaa-0000-0000-0000-000000000001', limit: 2, leaseMs: 60_000 });
    expect(idsOf(first)).toEqual(idsOf(hot.slice(0, 2)));
    // A claim of its own sees the key's head leased: only the other aggregate's row.
    expect(idsOf(await claim(10))).toEqual([other.id]);

    const { settled, claimed } = await store.settleAndClaim!('aaaaaaaa-0000-0000-0000-000000000001', positionsOf(first), next(2));

    expect(settled).toBe(2);
    expect(idsOf(claimed)).toEqual(idsOf(hot.slice(2, 4)));
    // The rows it marked are never handed out again; the last row waits behind the run now leased.
    expect(idsOf(await claim(10))).toEqual([]);
  });

  it('claims nothing of an aggregate whose row it could not mark (another relay took the lease over), and marks nothing of that row', async () => {
    const hot = Array.from({ length: 4 }, () => contractMessage({ aggregateId: 'hot' }));
    await underTest.write(hot);
    const stale = await store.claim({ owner: 'relay-a', token: 'bbbbbbbb-0000-0000-0000-000000000001', limit: 1, leaseMs: 100 });
    expect(idsOf(stale)).toEqual([hot[0].id]);
    const takenOver = await waitFor('the short lease to expire and another relay to take the row over', async () => {
      const rows = await store.claim({ owner: 'relay-b', token: randomUUID(), limit: 1, leaseMs: 60_000 });
      return rows.length > 0 && rows;
    });
    expect(idsOf(takenOver)).toEqual([hot[0].id]);

    const { settled, claimed } = await store.settleAndClaim!('bbbbbbbb-0000-0000-0000-000000000001', positionsOf(stale), next(10));

    expect(settled).toBe(0);
    // hot[0] is still relay-b's to publish: nothing behind it may go yet.
    expect(idsOf(claimed)).toEqual([]);
  });

  it('claims other aggregates as a claim would when nothing was settled, and answers with no rows when nothing is claimable', async () => {
    const rows = [contractMessage({ aggregateId: 'a' }), contractMessage({ aggregateId: 'b' })];
    await underTest.write(rows);

    const some = await store.settleAndClaim!(randomUUID(), [], next(10));
    expect(some).toEqual({ settled: 0, claimed: expect.any(Array) });
    expect(idsOf(some.claimed)).toEqual(idsOf(rows));

    // Both rows are leased now: a stranger's token settles nothing and the claim finds nothing.
    const none = await store.settleAndClaim!(randomUUID(), positionsOf(some.claimed), next(10));
    expect(none).toEqual({ settled: 0, claimed: [] });
  });
});
