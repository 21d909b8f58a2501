import { aggregateOf } from './stream-overflow.port';
import type { StreamRelay } from './stream-relay';
import { commit, FakeBroker, FakeTable, message, relayOn, settled } from './stream-relay.fixtures';

describe('StreamRelay: the table beside the stream (diverted messages, paused destinations, backlogged aggregates)', () => {
  it('moves a message that keeps failing, and the later ones of its aggregate, to the table and streams the others on', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 2, 4, table);
    broker.refuseKey = 'bad';
    await relay.accept(commit(10n, 'bad', 'good'));
    await relay.accept(commit(20n, 'bad', 'good'));
    await relay.accept(commit(30n, 'good'));
    await settled(() => confirmed.at(-1) === 30n);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-1', '20-1', '30-0']);
    expect(table.rows).toEqual([
      { id: '10-0', attempts: 2, error: 'no leader for bad' },
      { id: '20-0', attempts: 0, error: expect.stringContaining('Held behind an earlier message') },
    ]);
    // Drained: the aggregate streams directly again.
    broker.refuseKey = undefined;
    table.backlog.clear();
    await relay.accept(commit(40n, 'bad'));
    await settled(() => confirmed.at(-1) === 40n);
    expect(broker.published.map((m) => m.envelope.id).at(-1)).toBe('40-0');
    expect(relay.divertedMessages).toBe(2);
    await relay.stop();
  });

  it('publishes no replayed message an earlier stream handed on, and asks only about the replayed commits', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    // Before it stopped, an earlier stream moved 10-0 to the table, whose relay published it.
    table.handed.add('10-0');
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 2, 4, table, { replayedUpTo: 20n });
    await relay.accept(commit(10n, 'a', 'b'));
    await relay.accept(commit(20n, 'a'));
    await relay.accept(commit(30n, 'a'));
    await settled(() => confirmed.at(-1) === 30n);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-1', '20-0', '30-0']);
    expect(table.askedHandedOn.flat().sort()).toEqual(['10-0', '10-1', '20-0']);
    expect(table.rows).toEqual([]);
    await relay.stop();
  });

  it('moves the messages committed after a pause of their destination to the table, in order, and streams those before it and the other aggregates', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 2, 4, table);
    await relay.accept(commit(10n, 'a'));
    await relay.accept({ lsn: 20n, messages: [], paused: ['things'] });
    await relay.accept(commit(30n, 'a', 'b'));
    await relay.accept({ lsn: 40n, messages: [{ ...message(40n, 0, 'c'), destination: 'other' }] });
    await settled(() => confirmed.at(-1) === 40n);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0', '40-0']);
    expect(table.rows).toEqual([
      { id: '30-0', attempts: 0, error: expect.stringContaining('destination "things" was paused') },
      { id: '30-1', attempts: 0, error: expect.stringContaining('destination "things" was paused') },
    ]);
    await relay.stop();
  });

  it('holds a destination paused before the stream started, read from the table before the first commit', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    table.paused.add('things');
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 2, 4, table);
    await relay.accept(commit(10n, 'a'));
    await settled(() => confirmed.at(-1) === 10n);
    expect(broker.published).toEqual([]);
    expect(table.rows.map((row) => row.id)).toEqual(['10-0']);
    await relay.stop();
  });

  it('asks the table only while it may hold rows: from the start until it holds none, and after a commit that wrote a row', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 1, 4, table);
    await relay.accept(commit(10n, 'a'));
    await relay.accept(commit(20n, 'b'));
    await settled(() => confirmed.at(-1) === 20n);
    expect(table.asked).toBe(1);
    // A requeue (or a table-mode writer) commits a pending row of 'b': the stream sees the commit.
    table.backlog.add(aggregateOf(message(0n, 0, 'b')));
    await relay.accept({ lsn: 30n, messages: [], wroteTable: true });
    await relay.accept(commit(40n, 'b'));
    await relay.accept(commit(50n, 'c'));
    await settled(() => confirmed.at(-1) === 50n);
    expect(table.rows.map((row) => row.id)).toEqual(['40-0']);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0', '20-0', '50-0']);
    // Drained: the next answer says none, and the stream stops asking again.
    table.backlog.clear();
    await relay.accept(commit(60n, 'b'));
    await relay.accept(commit(70n, 'b'));
    await settled(() => confirmed.at(-1) === 70n);
    const asked = table.asked;
    await relay.accept(commit(80n, 'b'));
    await settled(() => confirmed.at(-1) === 80n);
    expect(table.asked).toBe(asked);
    expect(broker.published.map((m) => m.envelope.id).slice(-3)).toEqual(['60-0', '70-0', '80-0']);
    await relay.stop();
  });

  it('keeps asking when a row was written while the answer "none" was being read', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const answer = table.held.bind(table);
    // The first answer is read before the row below commits, and arrives after the stream saw it.
    table.held = async () => {
      const backlog = await answer();
      if (table.asked === 1) await gate;
      return backlog;
    };
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 1, 4, table);
    await relay.accept(commit(10n, 'a'));
    await settled(() => table.asked === 1);
    table.backlog.add(aggregateOf(message(0n, 0, 'b')));
    await relay.accept({ lsn: 20n, messages: [], wroteTable: true });
    await relay.accept(commit(30n, 'b'));
    open();
    await settled(() => confirmed.at(-1) === 30n);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0']);
    expect(table.rows.map((row) => row.id)).toEqual(['30-0']);
    await relay.stop();
  });

  it('tells its owner when the table cannot be read, publishes nothing unchecked, and stops when told to', async () => {
    const broker = new FakeBroker();
    const table = new FakeTable();
    table.held = async () => {
      throw new Error('the database system is shutting down');
    };
    const confirmed: bigint[] = [];
    const failures: string[] = [];
    const relay: StreamRelay = relayOn(broker, confirmed, 2, 4, table, {
      onTableFailure: (error) => {
        failures.push(String(error));
        void relay.stop();
      },
    });
    await relay.accept(commit(10n, 'a'));
    await settled(() => failures.length === 1);
    await relay.stop();
    expect(failures).toEqual(['Error: the database system is shutting down']);
    expect(broker.published).toEqual([]);
    expect(confirmed).toEqual([]);
  });
});
