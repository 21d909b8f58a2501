import type { OutgoingMessage } from '../outbox-message';
import { RetryPolicy } from '../retry-policy';
import { HeldAggregates, UNSEEN_COMMITS_CHECKED } from './held-aggregates';
import type { StreamMessage } from './stream-message';
import { aggregateOf, type StreamOverflow, type TableBacklog, type TableHeld, type TableReadContext } from './stream-overflow.port';
import { StreamRelay } from './stream-relay';
import { TableWrites } from './table-writes';

type Aggregate = { aggregateType: string; aggregateId: string };
const parcel = (aggregateId: string): Aggregate => ({ aggregateType: 'parcel', aggregateId });
const key = (aggregateId: string) => aggregateOf(parcel(aggregateId));

/**
 * The table double: rows by aggregate with the transaction that inserted each; it places them as
 * the SQL does (earliest position when every row's inserter is a known insert-only commit), and
 * answers "not visible" while a decoded transaction is still listed in `invisible`.
 */
class PlacingTable implements StreamOverflow {
  readonly rows: Array<{ aggregate: string; xid: number }> = [];
  readonly invisible = new Set<number>();
  readonly contexts: TableReadContext[] = [];
  readonly diverted: string[] = [];
  /** Publishes (by the test's transport) and moves to the table, in the order they happened. */
  readonly log: string[] = [];
  async held(limit: number, context?: TableReadContext): Promise<TableHeld> {
    const answer = this.answer([...new Set(this.rows.map((row) => row.aggregate))], context);
    return { ...answer, complete: answer.aggregates.size <= limit };
  }
  async backlogged(aggregates: ReadonlyArray<Aggregate>, context?: TableReadContext): Promise<TableBacklog> {
    return { ...this.answer(aggregates.map(aggregateOf), context), any: this.rows.length > 0 };
  }
  async pausedDestinations(): Promise<string[]> {
    return [];
  }
  async replayWindow(): Promise<bigint | undefined> {
    return undefined;
  }
  async handedOn(): Promise<Set<string>> {
    return new Set();
  }
  async divert(messages: ReadonlyArray<{ message: StreamMessage }>): Promise<void> {
    for (const { message } of messages) this.diverted.push(message.id), this.log.push(`moved ${message.id}`), this.rows.push({ aggregate: aggregateOf(message), xid: 0 });
  }
  private answer(asked: string[], context: TableReadContext | undefined) {
    this.contexts.push({ mustSee: [...(context?.mustSee ?? [])], inserts: new Map(context?.inserts) });
    const aggregates = new Set(asked.filter((aggregate) => this.rows.some((row) => row.aggregate === aggregate)));
    const heldFrom = new Map<string, bigint>();
    for (const aggregate of aggregates) {
      const positions = this.rows.filter((row) => row.aggregate === aggregate).map((row) => context?.inserts.get(row.xid));
      if (positions.every((at) => at !== undefined)) heldFrom.set(aggregate, positions.reduce((a, b) => (a! < b! ? a : b))!);
    }
    return { aggregates, heldFrom, visible: !(context?.mustSee ?? []).some((xid) => this.invisible.has(xid)) };
  }
}

describe('TableWrites', () => {
  it('lists the table-writing commits a read must see until one saw them, and places only insert-only commits', () => {
    const writes = new TableWrites();
    writes.committed({ lsn: 10n, wroteTable: true, xid: 700 });
    writes.committed({ lsn: 20n, wroteTable: true, xid: 701, updatedRows: true });
    writes.committed({ lsn: 30n, wroteTable: false, xid: 702 });
    expect(writes.context().mustSee).toEqual([700, 701]);
    expect([...writes.context().inserts]).toEqual([[700, 10n]]);
    writes.seen([700]);
    expect(writes.context().mustSee).toEqual([701]);
  });

  it('forgets insert-only commits before the oldest message left to check, and the oldest past its bound', () => {
    const writes = new TableWrites(2);
    writes.committed({ lsn: 10n, wroteTable: true, xid: 1 });
    writes.committed({ lsn: 20n, wroteTable: true, xid: 2 });
    writes.committed({ lsn: 30n, wroteTable: true, xid: 3 });
    expect([...writes.context().inserts.keys()]).toEqual([2, 3]);
    writes.forgetBefore(30n);
    expect([...writes.context().inserts]).toEqual([[3, 30n]]);
  });
});

describe('HeldAggregates: reads that must see the decoded commits', () => {
  it('reads again while the snapshot does not see a decoded table-writing commit, then answers from the read that does', async () => {
    const table = new PlacingTable();
    const held = new HeldAggregates(table, 100, { retryMs: 1, timeoutMs: 5_000 });
    expect(await held.heldOf([parcel('a')])).toEqual(new Map());
    // The requeue of 'a' is decoded, but its backend has not left the ProcArray yet.
    table.rows.push({ aggregate: key('a'), xid: 900 });
    table.invisible.add(900);
    held.tableWritten({ lsn: 50n, wroteTable: true, xid: 900, updatedRows: true });
    setTimeout(() => table.invisible.delete(900), 20);
    expect(await held.heldOf([parcel('a')])).toEqual(new Map([[key('a'), 0n]]));
    const after = table.contexts.slice(1);
    expect(after.length).toBeGreaterThan(1);
    expect(after.every((context) => context.mustSee.join() === '900')).toBe(true);
    // Seen once: the next read need not check it again.
    held.tableWritten();
    await held.heldOf([parcel('b')]);
    expect(table.contexts.at(-1)!.mustSee).toEqual([]);
  });

  it('fails, naming the commits, when they stay invisible past the deadline', async () => {
    const table = new PlacingTable();
    const held = new HeldAggregates(table, 100, { retryMs: 1, timeoutMs: 30 });
    table.invisible.add(41);
    held.tableWritten({ lsn: 5n, wroteTable: true, xid: 41 });
    await expect(held.heldOf([parcel('a')])).rejects.toThrow(/transaction ids 41\) that the table's reads still did not see after \d+ ms/);
  });
});

describe('HeldAggregates: decoded commits piling up while no batch reads', () => {
  it('makes one read to see them once past the bound, and none below it', async () => {
    const table = new PlacingTable();
    const held = new HeldAggregates(table);
    for (let xid = 1; xid <= UNSEEN_COMMITS_CHECKED; xid++) held.tableWritten({ lsn: BigInt(xid), wroteTable: true, xid, updatedRows: true });
    await held.seeDecodedCommits();
    expect(table.contexts).toHaveLength(0);
    held.tableWritten({ lsn: 5_000n, wroteTable: true, xid: 5_000, updatedRows: true });
    await held.seeDecodedCommits();
    expect(table.contexts.map((context) => context.mustSee.length)).toEqual([UNSEEN_COMMITS_CHECKED + 1]);
    await held.heldOf([parcel('a')]);
    expect(table.contexts.at(-1)!.mustSee).toEqual([]);
  });
});

describe('HeldAggregates: rows inserted by commits the stream decoded', () => {
  it('holds an aggregate from the earliest decoded insert of its rows, keeps that in memory, and from the start when one row is unknown', async () => {
    const table = new PlacingTable();
    const held = new HeldAggregates(table);
    await held.heldOf([parcel('x')]);
    table.rows.push({ aggregate: key('a'), xid: 11 }, { aggregate: key('a'), xid: 12 });
    held.tableWritten({ lsn: 40n, wroteTable: true, xid: 11 });
    held.tableWritten({ lsn: 60n, wroteTable: true, xid: 12 });
    expect(await held.heldOf([parcel('a')])).toEqual(new Map([[key('a'), 40n]]));
    // Read into the set at the next quiet batch, with its position; asked again for a batch of 'a'.
    await held.heldOf([parcel('y')]);
    expect(await held.heldOf([parcel('a')])).toEqual(new Map([[key('a'), 40n]]));
    // A row whose inserter the stream does not know (an older one, a forgotten one) holds everything.
    table.rows.push({ aggregate: key('a'), xid: 5 });
    held.tableWritten();
    expect(await held.heldOf([parcel('a')])).toEqual(new Map([[key('a'), 0n]]));
  });
});

describe('StreamRelay: a row committed after a message does not hold it', () => {
  it('publishes the message committed before the row, moves the one committed after it to the table behind the row', async () => {
    const table = new PlacingTable();
    const published: string[] = [];
    const transport = { name: 'fake', publish: async (outgoing: OutgoingMessage) => void (published.push(outgoing.envelope.id), table.log.push(`published ${outgoing.envelope.id}`)) };
    const relay = new StreamRelay({
      transports: new Map([['default', transport]]),
      batchSize: 10,
      maxBuffered: 100,
      publishTimeoutMs: 1_000,
      retryPolicy: new RetryPolicy(Number.MAX_SAFE_INTEGER, { initialMs: 1, maxMs: 2, jitter: 0 }),
      observer: {}, relayId: 'stream-test',
      logger: { warn: () => undefined },
      overflow: table,
      confirm: () => undefined,
    });
    const m = (lsn: bigint, id: string): StreamMessage => ({
      ...parcel('a'),
      id,
      type: 'parcel.noted',
      version: 1,
      transport: 'default',
      destination: 'parcels',
      occurredAt: new Date(0).toISOString(),
      headers: {},
      payloadJson: '{}',
      commit: lsn,
      index: 0,
    });
    // m1, then a delayed row of 'a' (insert-only commit 50), then m2: all decoded before the batch is checked.
    table.rows.push({ aggregate: key('a'), xid: 77 });
    // Accepted in one turn, before the first batch is checked: the reader decodes ahead of the publishing.
    await Promise.all([
      relay.accept({ lsn: 10n, messages: [m(10n, 'm1')] }),
      relay.accept({ lsn: 50n, messages: [], wroteTable: true, xid: 77 }),
      relay.accept({ lsn: 60n, messages: [m(60n, 'm2')] }),
    ]);
    const deadline = Date.now() + 5_000;
    while ((published.length < 1 || table.diverted.length < 1) && Date.now() < deadline) await new Promise((resume) => setTimeout(resume, 1));
    await relay.stop();
    expect(published).toEqual(['m1']);
    expect(table.diverted).toEqual(['m2']);
    // m2 reaches the table (where the table relay may publish it at once) only after m1 was acknowledged.
    expect(table.log).toEqual(['published m1', 'moved m2']);
  });
});
