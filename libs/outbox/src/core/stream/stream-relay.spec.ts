import type { OutgoingMessage } from '../outbox-message';
import type { OutboxTransport } from '../outbox-transport.port';
import { RetryPolicy } from '../retry-policy';
import { AcknowledgedPositions } from './acknowledged-positions';
import type { StreamCommit, StreamMessage } from './stream-message';
import { formatLsn, parseLsn } from './stream-message';
import { StreamRelay, type StreamRelayConfig } from './stream-relay';
import { aggregateOf, type StreamOverflow, type TableBacklog } from './stream-overflow.port';

const message = (commit: bigint, index: number, aggregateId: string): StreamMessage => ({
  id: `${commit}-${index}`,
  type: 'thing.happened',
  version: 1,
  aggregateType: 'thing',
  aggregateId,
  transport: 'default',
  destination: 'things',
  occurredAt: new Date(0).toISOString(),
  headers: {},
  payloadJson: JSON.stringify({ commit: String(commit), index }),
  commit,
  index,
});
const commit = (lsn: bigint, ...aggregates: string[]): StreamCommit => ({ lsn, messages: aggregates.map((a, i) => message(lsn, i, a)) });

/** A broker double: acknowledges unless told to refuse, or holds publishes until released. */
class FakeBroker implements OutboxTransport {
  readonly name = 'fake';
  readonly published: OutgoingMessage[] = [];
  refuse = 0;
  refuseKey: string | undefined;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }
  async publish(outgoing: OutgoingMessage): Promise<void> {
    await this.gate;
    if (outgoing.key === this.refuseKey) throw new Error(`no leader for ${outgoing.key}`);
    if (this.refuse > 0) {
      this.refuse--;
      throw new Error('broker down');
    }
    this.published.push(outgoing);
  }
}

/** The table double: keeps what was diverted, and reports those aggregates as backlogged until drained. */
class FakeTable implements StreamOverflow {
  readonly rows: Array<{ id: string; attempts: number; error: string }> = [];
  readonly backlog = new Set<string>();
  readonly paused = new Set<string>();
  asked = 0;
  async divert(messages: ReadonlyArray<{ message: StreamMessage; attempts: number; error: string }>): Promise<void> {
    for (const { message, attempts, error } of messages) {
      this.rows.push({ id: message.id, attempts, error });
      this.backlog.add(aggregateOf(message));
    }
  }
  async backlogged(aggregates: ReadonlyArray<Pick<StreamMessage, 'aggregateType' | 'aggregateId'>>): Promise<TableBacklog> {
    this.asked++;
    return { aggregates: new Set(aggregates.map(aggregateOf).filter((key) => this.backlog.has(key))), any: this.backlog.size > 0 };
  }
  async held(): Promise<{ aggregates: Set<string>; complete: boolean }> {
    this.asked++;
    return { aggregates: new Set(this.backlog), complete: true };
  }
  async pausedDestinations(): Promise<string[]> {
    return [...this.paused];
  }
}

function relayOn(broker: FakeBroker, confirmed: bigint[], batchSize = 2, maxBuffered = 4, overflow?: StreamOverflow, more: Partial<StreamRelayConfig> = {}): StreamRelay {
  return new StreamRelay({
    ...more,
    overflow,
    divertAfterAttempts: 2,
    transports: new Map([['default', broker]]),
    batchSize,
    maxBuffered,
    publishTimeoutMs: 1_000,
    retryPolicy: new RetryPolicy(Number.MAX_SAFE_INTEGER, { initialMs: 1, maxMs: 2, jitter: 0 }),
    observer: {},
    logger: { warn: () => undefined },
    confirm: (lsn) => void confirmed.push(lsn),
  });
}

/** Waits for a condition with a deadline: retries run on timers, which a loaded machine delays. */
const settled = async (condition: () => boolean, deadlineMs = 5_000) => {
  const deadline = Date.now() + deadlineMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(condition()).toBe(true);
};

describe('AcknowledgedPositions', () => {
  it('confirms only up to the last commit whose messages, and all before, are acknowledged', () => {
    const positions = new AcknowledgedPositions();
    const first = commit(10n, 'a', 'b');
    const second = commit(20n, 'c');
    positions.received(first);
    positions.received(second);
    positions.acknowledged([second.messages[0], first.messages[0]]);
    expect(positions.advance()).toBeUndefined();
    positions.acknowledged([first.messages[1]]);
    expect(positions.advance()).toBe(20n);
    expect(positions.confirmed).toBe(20n);
  });

  it('tells whether the commits it moved past carried messages, so that only those positions are saved', () => {
    const positions = new AcknowledgedPositions();
    positions.received({ lsn: 5n, messages: [] });
    expect(positions.advance()).toBe(5n);
    expect(positions.lastAdvanceCarriedMessages).toBe(false);
    const carrying = commit(10n, 'a');
    positions.received(carrying);
    positions.received({ lsn: 15n, messages: [] });
    positions.acknowledged(carrying.messages);
    expect(positions.advance()).toBe(15n);
    expect(positions.lastAdvanceCarriedMessages).toBe(true);
  });

  it('refuses an acknowledgement of a commit it never received', () => {
    expect(() => new AcknowledgedPositions().acknowledged([message(5n, 0, 'a')])).toThrow('not open');
  });
});

describe('LSN text', () => {
  it('round-trips', () => {
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(parseLsn('1/0')).toBe(1n << 32n);
  });
});

describe('StreamRelay', () => {
  it('publishes in commit order and confirms each commit after its acknowledgement', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed);
    await relay.accept(commit(10n, 'a', 'b'));
    await relay.accept(commit(20n, 'a'));
    await relay.accept(commit(30n));
    await settled(() => confirmed.at(-1) === 30n);
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0', '10-1', '20-0']);
    await relay.stop();
  });

  it('keeps a failed message and those behind it, retries them, and confirms nothing past them meanwhile', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 10);
    broker.refuse = 3;
    await relay.accept(commit(10n, 'a'));
    await relay.accept(commit(20n, 'a'));
    await settled(() => confirmed.includes(20n));
    expect(broker.published.map((m) => m.envelope.id)).toEqual(['10-0', '20-0']);
    await relay.stop();
  });

  it('decodes ahead while a batch is in flight, up to maxBuffered, then holds the reader back', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 2, 4);
    broker.hold();
    await relay.accept(commit(1n, 'a', 'b'));
    await relay.accept(commit(2n, 'c', 'd'));
    let third = false;
    const accepting = relay.accept(commit(3n, 'e', 'f', 'g')).then(() => (third = true));
    // Give the relay every chance to take the third commit in: it must still be held.
    for (let i = 0; i < 100; i++) await new Promise((resolve) => setImmediate(resolve));
    // Batch 1 in flight, 5 waiting: the reader is held until the buffer drains below 4.
    expect(third).toBe(false);
    expect(confirmed).toEqual([]);
    broker.release();
    await accepting;
    await settled(() => confirmed.at(-1) === 3n);
    expect(broker.published).toHaveLength(7);
    await relay.stop();
  });

  it('confirms nothing that was not acknowledged when stopped mid-batch', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed, 1);
    await relay.accept(commit(1n, 'a'));
    await settled(() => confirmed.includes(1n));
    broker.refuse = Number.MAX_SAFE_INTEGER;
    await relay.accept(commit(2n, 'a'));
    await relay.stop();
    expect(confirmed).toEqual([1n]);
  });

  it('confirms the server position it is told of when nothing is outstanding, and never while something is', async () => {
    const broker = new FakeBroker();
    const confirmed: bigint[] = [];
    const relay = relayOn(broker, confirmed);
    expect(await relay.caughtUp(50n)).toBe(true);
    expect(confirmed).toEqual([50n]);
    broker.hold();
    await relay.accept(commit(60n, 'a'));
    expect(await relay.caughtUp(70n)).toBe(false);
    expect(confirmed).toEqual([50n]);
    broker.release();
    await settled(() => confirmed.at(-1) === 60n);
    await relay.stop();
  });

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

