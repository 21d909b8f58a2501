import { HeldAggregates } from './held-aggregates';
import { aggregateOf, type TableBacklog } from './stream-overflow.port';

type Aggregate = { aggregateType: string; aggregateId: string };
const parcel = (aggregateId: string): Aggregate => ({ aggregateType: 'parcel', aggregateId });
const keys = (...ids: string[]) => new Map(ids.map((id) => [aggregateOf(parcel(id)), 0n]));

/** The table double: the aggregates it holds, and each query asked of it. */
class FakeTable {
  readonly holding = new Set<string>();
  readonly queries: string[] = [];
  beforeAnswer: (() => Promise<void> | void) | undefined;
  async held(limit: number): Promise<{ aggregates: Set<string>; complete: boolean }> {
    this.queries.push('held');
    await this.beforeAnswer?.();
    return { aggregates: new Set([...this.holding].slice(0, limit)), complete: this.holding.size <= limit };
  }
  async backlogged(aggregates: ReadonlyArray<Aggregate>): Promise<TableBacklog> {
    this.queries.push(`backlogged ${[...new Set(aggregates.map((a) => a.aggregateId))].join(',')}`);
    await this.beforeAnswer?.();
    return { aggregates: new Set(aggregates.map(aggregateOf).filter((key) => this.holding.has(key))), any: this.holding.size > 0 };
  }
  hold(...ids: string[]): void {
    for (const id of ids) this.holding.add(aggregateOf(parcel(id)));
  }
}

describe('HeldAggregates', () => {
  it('reads the held set once and answers batches of other aggregates from memory', async () => {
    const table = new FakeTable();
    table.hold('dead');
    const held = new HeldAggregates(table);
    expect(await held.heldOf([parcel('a'), parcel('dead')])).toEqual(keys('dead'));
    for (let batch = 0; batch < 50; batch++) expect(await held.heldOf([parcel(`b${batch}`), parcel('c')])).toEqual(new Map());
    expect(table.queries).toEqual(['held']);
  });

  it('asks the table about a held aggregate its batch carries, and forgets it once drained', async () => {
    const table = new FakeTable();
    table.hold('dead', 'other');
    const held = new HeldAggregates(table);
    await held.heldOf([parcel('x')]);
    expect(await held.heldOf([parcel('dead'), parcel('x'), parcel('dead')])).toEqual(keys('dead'));
    expect(table.queries).toEqual(['held', 'backlogged dead']);
    // Requeued and published from the table (an update to 'published' is not a write that holds).
    table.holding.clear();
    expect(await held.heldOf([parcel('dead'), parcel('x')])).toEqual(new Map());
    expect(await held.heldOf([parcel('dead')])).toEqual(new Map());
    expect(table.queries).toEqual(['held', 'backlogged dead', 'backlogged dead']);
  });

  it('asks the table after a commit wrote it, so a new row holds its aggregate, and reads the set again at the next quiet batch', async () => {
    const table = new FakeTable();
    const held = new HeldAggregates(table);
    expect(await held.heldOf([parcel('a')])).toEqual(new Map());
    table.hold('a');
    held.tableWritten();
    expect(await held.heldOf([parcel('a'), parcel('b')])).toEqual(keys('a'));
    expect(await held.heldOf([parcel('b')])).toEqual(new Map());
    expect(await held.heldOf([parcel('c')])).toEqual(new Map());
    expect(table.queries).toEqual(['held', 'backlogged a,b', 'held']);
  });

  it('asks per batch while the table is written between batches (a table relay draining), and keeps the set once writes pause', async () => {
    const table = new FakeTable();
    table.hold('t1', 't2', 't3');
    const held = new HeldAggregates(table);
    await held.heldOf([parcel('x')]);
    for (const drained of ['t1', 't2']) {
      // A claim or settle of a table row commits between two batches.
      held.tableWritten();
      table.holding.delete(aggregateOf(parcel(drained)));
      expect(await held.heldOf([parcel('t3'), parcel('y')])).toEqual(keys('t3'));
    }
    expect(await held.heldOf([parcel('y')])).toEqual(new Map());
    expect(await held.heldOf([parcel('z')])).toEqual(new Map());
    expect(table.queries).toEqual(['held', 'backlogged t3,y', 'backlogged t3,y', 'held']);
  });

  it('does not keep a read that a table write overtook, but answers the batch it was made for', async () => {
    const table = new FakeTable();
    const held = new HeldAggregates(table);
    // The read's snapshot is taken before the requeue of 'late' commits; the stream sees that commit meanwhile.
    table.beforeAnswer = () => {
      table.beforeAnswer = undefined;
      held.tableWritten();
      table.hold('late');
    };
    expect(await held.heldOf([parcel('a')])).toEqual(new Map());
    expect(await held.heldOf([parcel('late')])).toEqual(keys('late'));
    expect(await held.heldOf([parcel('b')])).toEqual(new Map());
    expect(await held.heldOf([parcel('late')])).toEqual(keys('late'));
    expect(table.queries).toEqual(['held', 'backlogged late', 'held', 'backlogged late']);
  });

  it('does not drop an aggregate on an answer that a table write overtook', async () => {
    const table = new FakeTable();
    table.hold('k');
    const held = new HeldAggregates(table);
    await held.heldOf([parcel('x')]);
    table.holding.clear();
    table.beforeAnswer = () => {
      table.beforeAnswer = undefined;
      held.tableWritten();
    };
    expect(await held.heldOf([parcel('k')])).toEqual(new Map());
    table.hold('k');
    expect(await held.heldOf([parcel('k')])).toEqual(keys('k'));
    expect(table.queries).toEqual(['held', 'backlogged k', 'backlogged k']);
  });

  it('holds what the stream moved to the table without asking', async () => {
    const table = new FakeTable();
    const held = new HeldAggregates(table);
    await held.heldOf([parcel('a')]);
    held.diverted([parcel('stuck')]);
    table.hold('stuck');
    expect(await held.heldOf([parcel('stuck'), parcel('a')])).toEqual(keys('stuck'));
    expect(table.queries).toEqual(['held', 'backlogged stuck']);
  });

  it('asks per batch while the table holds more aggregates than it keeps, and reads the set again later', async () => {
    const table = new FakeTable();
    table.hold('a', 'b', 'c');
    const held = new HeldAggregates(table, 2);
    expect(await held.heldOf([parcel('c'), parcel('d')])).toEqual(keys('c'));
    expect(await held.heldOf([parcel('b')])).toEqual(keys('b'));
    expect(table.queries).toEqual(['held', 'backlogged c,d', 'backlogged b']);
    table.holding.clear();
    table.hold('a');
    for (let batch = 0; batch < 100; batch++) await held.heldOf([parcel('z')]);
    expect(table.queries.filter((query) => query === 'held')).toHaveLength(2);
    table.queries.length = 0;
    expect(await held.heldOf([parcel('a'), parcel('z')])).toEqual(keys('a'));
    expect(await held.heldOf([parcel('z')])).toEqual(new Map());
    expect(table.queries).toEqual(['backlogged a']);
  });

  it('stops asking once a per-batch answer says the table holds nothing', async () => {
    const table = new FakeTable();
    table.hold('a', 'b', 'c');
    const held = new HeldAggregates(table, 2);
    await held.heldOf([parcel('a')]);
    table.holding.clear();
    expect(await held.heldOf([parcel('a')])).toEqual(new Map());
    expect(await held.heldOf([parcel('a')])).toEqual(new Map());
    expect(table.queries).toEqual(['held', 'backlogged a', 'backlogged a']);
  });
});
