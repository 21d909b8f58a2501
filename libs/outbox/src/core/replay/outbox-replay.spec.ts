import { ConsoleError } from '../console/console.error';
import { OutboxReplay } from './outbox-replay';
import { REPLAY_HEADERS, type ReplayFilter, type ReplayHold, type ReplayStore } from './replay.port';

interface Row {
  position: number;
  aggregate: string;
  status: 'published' | 'pending';
  owner: string | null;
  headers: Record<string, string>;
}

/** Published rows 1..n of aggregates a/b; `inFlight` aggregates have a newer row a relay holds. */
function rowsStore(n: number, { streamed = false, inFlight = new Set<string>() } = {}) {
  const rows: Row[] = Array.from({ length: n }, (_, i) => ({ position: i + 1, aggregate: i % 2 ? 'b' : 'a', status: 'published', owner: null, headers: { trace: 't' } }));
  const calls: string[] = [];
  const matches = (row: Row, filter: ReplayFilter) => filter.aggregateId === undefined || row.aggregate === filter.aggregateId;
  const store: ReplayStore = {
    countPublished: async (filter) => (calls.push('count'), rows.filter((r) => r.status === 'published' && matches(r, filter)).length),
    countHeld: async (owner) => rows.filter((r) => r.owner === owner).length,
    streamedMessagesExist: async () => streamed,
    statusOf: async (id) => ({ 'dead-one': 'dead' })[id],
    holdBatch: async (filter: ReplayFilter, hold: ReplayHold, after: string, limit: number) => {
      calls.push(`hold>${after}`);
      const batch = rows.filter((r) => r.status === 'published' && matches(r, filter) && r.position > Number(after)).slice(0, limit);
      for (const r of batch) Object.assign(r, { status: 'pending', owner: hold.owner, headers: { ...r.headers, ...hold.headers } });
      return batch.map((r) => String(r.position));
    },
    releaseBatch: async (owner: string, after: string, limit: number) => {
      calls.push(`release>${after}`);
      const batch = rows.filter((r) => r.owner === owner && r.position > Number(after) && !inFlight.has(r.aggregate)).slice(0, limit);
      for (const r of batch) r.owner = null;
      return batch.map((r) => String(r.position));
    },
  };
  return { store, rows, calls, inFlight };
}

const noWait = { releasePollMs: 0 };

describe('OutboxReplay', () => {
  it.each([
    [{ filter: { aggregateId: 'a' }, reason: '' }, 'reason'],
    [{ filter: { aggregateId: 'a' }, reason: '   ' }, 'reason'],
    [{ filter: { aggregateId: 'a' }, reason: 'x'.repeat(501) }, 'reason'],
    [{ filter: { aggregateId: 'a' }, reason: 'line\nbreak' }, 'reason'],
    [{ filter: {}, reason: 'consumer lost its database' }, 'filter'],
    [{ filter: { from: new Date('2026-02-01'), to: new Date('2026-01-01') }, reason: 'lost' }, 'to'],
    [{ filter: { type: 'x' }, reason: 'lost', by: '' }, 'by'],
  ])('refuses %j before any statement, naming the field (%s)', async (request, field) => {
    const { store, calls } = rowsStore(3);
    await expect(new OutboxReplay(store).replay(request)).rejects.toMatchObject({ kind: 'invalid', field });
    expect(calls).toEqual([]);
  });

  it('says what to pass when no filter is given, and replays everything only when confirmed with `all`', async () => {
    const { store, rows } = rowsStore(3);
    await expect(new OutboxReplay(store).replay({ filter: {}, reason: 'lost' })).rejects.toThrow(/at least one filter .* --all \(CLI\), "all": true \(REST\)/);
    const outcome = await new OutboxReplay(store, noWait).replay({ filter: {}, reason: 'lost', all: true });
    expect(outcome).toMatchObject({ matched: 3, replayed: 3, waiting: 0 });
    expect(rows.every((r) => r.status === 'pending' && r.owner === null)).toBe(true);
  });

  it('only counts on a dry run', async () => {
    const { store, rows, calls } = rowsStore(5);
    expect(await new OutboxReplay(store).replay({ filter: { aggregateId: 'a' }, reason: 'lost', dryRun: true })).toMatchObject({ matched: 3, replayed: 0, dryRun: true, replayId: null });
    expect(calls).toEqual(['count']);
    expect(rows.every((r) => r.status === 'published')).toBe(true);
  });

  it('holds every matching row in position batches first, then releases them, and marks them with the replay headers', async () => {
    const { store, rows, calls } = rowsStore(9);
    const outcome = await new OutboxReplay(store, { ...noWait, batchSize: 2 }, () => Date.parse('2026-03-01T10:00:00Z')).replay({
      filter: { aggregateId: 'a' },
      reason: '  shipping lost its database  ',
      by: 'alice',
    });
    expect(outcome).toMatchObject({ matched: 5, replayed: 5, waiting: 0, dryRun: false, replayedAt: '2026-03-01T10:00:00.000Z', heldUntil: '2026-03-01T10:05:00.000Z', note: null });
    // Every hold batch comes before the first release: no row of the replay goes out before all are in place.
    expect(calls).toEqual(['count', 'hold>0', 'hold>3', 'hold>7', 'release>0', 'release>3', 'release>7']);
    const replayed = rows.filter((r) => r.aggregate === 'a');
    expect(replayed.map((r) => r.headers)).toEqual(
      replayed.map(() => ({
        trace: 't',
        [REPLAY_HEADERS.replayedAt]: '2026-03-01T10:00:00.000Z',
        [REPLAY_HEADERS.reason]: 'shipping lost its database',
        [REPLAY_HEADERS.by]: 'alice',
        [REPLAY_HEADERS.replayId]: outcome.replayId,
      })),
    );
    expect(rows.filter((r) => r.aggregate === 'b').every((r) => r.status === 'published')).toBe(true);
  });

  it('keeps releasing while a newer row of an aggregate is in flight, and reports what still waits when the wait is over', async () => {
    const subject = rowsStore(4, { inFlight: new Set(['b']) });
    let now = 0;
    const slept: number[] = [];
    const replay = new OutboxReplay(subject.store, { releaseWaitMs: 1_000, releasePollMs: 250 }, () => now, async (ms) => {
      slept.push(ms);
      now += ms;
    });
    expect(await replay.replay({ filter: { type: 'x' }, reason: 'lost' })).toMatchObject({ replayed: 4, waiting: 2 });
    expect(slept).toEqual([250, 250, 250, 250]);
    expect(subject.rows.filter((r) => r.owner !== null).map((r) => r.aggregate)).toEqual(['b', 'b']);

    // Released as soon as the in-flight row is out.
    const again = rowsStore(4, { inFlight: new Set(['b']) });
    const replay2 = new OutboxReplay(again.store, { releasePollMs: 10 }, Date.now, async () => void again.inFlight.clear());
    expect(await replay2.replay({ filter: { type: 'x' }, reason: 'lost' })).toMatchObject({ replayed: 4, waiting: 0 });
  });

  it('refuses, saying why and what to do, when the WAL mode streamed the table and no row matches; notes it otherwise', async () => {
    const empty = rowsStore(0, { streamed: true });
    const refused = new OutboxReplay(empty.store).replay({ filter: { type: 'x' }, reason: 'lost' });
    await expect(refused).rejects.toBeInstanceOf(ConsoleError);
    await expect(refused).rejects.toThrow(/WAL delivery mode .* keeps no row of what it published.*Replay them from the broker/);
    const some = rowsStore(2, { streamed: true });
    const outcome = await new OutboxReplay(some.store, noWait).replay({ filter: { type: 'x' }, reason: 'lost' });
    expect(outcome).toMatchObject({ replayed: 2, note: expect.stringContaining('were replayed, not every message the stream published') });
    // Rows a pause held are there too, and are no failed publish.
    expect(outcome.note).toMatch(/moved to the outbox table \(a publish that failed, a destination that was paused, or a later message of an aggregate held there\)/);
  });

  it('says "would be replayed" on a dry run in the WAL mode, where nothing was replayed', async () => {
    const some = rowsStore(2, { streamed: true });
    const outcome = await new OutboxReplay(some.store, noWait).replay({ filter: { type: 'x' }, reason: 'lost', dryRun: true });
    expect(outcome).toMatchObject({ matched: 2, replayed: 0, dryRun: true });
    expect(outcome.note).toMatch(/would be replayed, not every message the stream published\.$/);
    expect(outcome.note).not.toMatch(/were replayed/);
  });

  it('says why one message asked for by id is not replayed: missing (not-found) or not published (conflict)', async () => {
    const { store } = rowsStore(0);
    await expect(new OutboxReplay(store).replay({ filter: { id: 'gone' }, reason: 'lost' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(new OutboxReplay(store).replay({ filter: { id: 'dead-one' }, reason: 'lost' })).rejects.toMatchObject({ kind: 'conflict', message: expect.stringContaining('is dead, not published') });
  });

  it('answers 0 without changing anything when nothing matches in the table mode', async () => {
    const { store, calls } = rowsStore(0);
    expect(await new OutboxReplay(store).replay({ filter: { type: 'x' }, reason: 'lost' })).toMatchObject({ matched: 0, replayed: 0, replayId: null });
    expect(calls).toEqual(['count']);
  });
});
