import { describeMalformedRows } from './malformed-rows.contract';
import type { EntityManager } from 'typeorm';
import { describeDeadLettersAndCleanup } from './dead-letters.contract';
import { describeOutboxStoreContract } from '@nest-outbox/outbox/testing';
import { describeOutboxContract } from './outbox-store.contract';
import { sqlStoreSubject } from './support/sql-store.subject';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { RecordingTransport } from './support/recording.transport';
import { waitFor } from './support/wait-for';

describeOutboxContract('postgres');
// The table the WAL mode's stream moves failing messages to: the store keeps the same promises for its rows.
describeOutboxStoreContract(sqlStoreSubject('postgres', 'hold', 'wal-overflow'));
describeDeadLettersAndCleanup('postgres');

describe('commit order on postgres', () => {
  let harness: OutboxHarness;

  beforeEach(async () => {
    harness = await createOutboxHarness('postgres', { relay: false });
  });

  afterEach(async () => {
    await harness?.close();
  });

  /** A transaction that stays open until the test lets it commit. */
  function openTransaction(work: (manager: EntityManager) => Promise<unknown>) {
    let commit!: () => void;
    const released = new Promise<void>((resolve) => (commit = resolve));
    let worked!: () => void;
    const workDone = new Promise<void>((resolve) => (worked = resolve));
    const done = harness.dataSource.transaction(async (manager) => {
      await work(manager);
      worked();
      await released;
    });
    return { commit, workDone, done };
  }

  it('publishes one aggregate’s explicit-API events in commit order, though the later writer commits while the earlier is still open', async () => {
    const event = (n: number) => ({ type: 'ledger.entry-posted', aggregateType: 'ledger', aggregateId: 'L-1', payload: { n }, topic: 'ledger' });
    const first = openTransaction((manager) => harness.publisher.add(manager, event(1)));
    await first.workDone;

    // The second writer tries to add and commit while the first is still open. Without
    // serialization it would commit first with a later position, and a relay reading in
    // between would publish event 2 before event 1 exists.
    const second = harness.dataSource.transaction((manager) => harness.publisher.add(manager, event(2)));
    const transport = new RecordingTransport();
    const relay = harness.relay('relay', transport);
    for (let round = 0; round < 5; round++) await relay.trigger();
    expect(transport.delivered).toHaveLength(0);

    first.commit();
    await first.done;
    await second;
    await waitFor('both events', async () => {
      await relay.trigger();
      return transport.delivered.length === 2;
    });
    expect(transport.delivered.map((m) => (m.envelope.payload as { n: number }).n)).toEqual([1, 2]);
    const rows = await harness.rows();
    expect(rows.map((row) => JSON.parse(row.payload).n)).toEqual([1, 2]);
  });

  it('does not serialize writers of different aggregates', async () => {
    const first = openTransaction((manager) => harness.publisher.add(manager, { type: 't', aggregateType: 'ledger', aggregateId: 'A', payload: {}, topic: 'ledger' }));
    await first.workDone;
    await harness.dataSource.transaction((manager) => harness.publisher.add(manager, { type: 't', aggregateType: 'ledger', aggregateId: 'B', payload: {}, topic: 'ledger' }));
    first.commit();
    await first.done;
    expect((await harness.rows()).map((row) => row.aggregateId)).toEqual(['A', 'B']);
  });
});
describeMalformedRows('postgres');
