import type { EntityManager } from 'typeorm';
import { HeldAggregates } from '../../libs/outbox/src/core/stream/held-aggregates';
import { aggregateOf } from '../../libs/outbox/src/core/stream/stream-overflow.port';
import { TableOverflow, visibleInSnapshot } from '../../libs/outbox/src/wal/table-overflow';
import { sqlConnectionOf } from '../../libs/outbox/src/typeorm/typeorm-sql.connection';
import type { SqlConnection } from '../../libs/outbox/src/core/sql-connection.port';
import { parseLsn, type StreamMessage } from '../../libs/outbox/src/core/stream/stream-message';
import { holdTransaction } from '../support/held-transaction';
import { RecordingTransport } from '../support/recording.transport';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

const parcel = (aggregateId: string) => ({ aggregateType: 'parcel', aggregateId });

// PostgreSQL sends a commit to the stream a moment before other snapshots see it. The stream's
// table reads check, in their own snapshot (pg_visible_in_snapshot over pg_current_snapshot()), that
// they see every table-writing transaction the stream decoded, and read again until they do.
describe('WAL delivery mode: the table reads see the decoded commits in their own snapshot', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  let overflow: TableOverflow;
  let connection: SqlConnection;

  beforeAll(async () => {
    sandbox = await walSandbox('wal_visible');
    app = await sandbox.start({ transport: new RecordingTransport(), relay: false });
    connection = sqlConnectionOf(app.dataSource);
    overflow = new TableOverflow(connection, 'outbox_messages', { deadLetterPolicy: 'hold' });
  });
  afterAll(() => sandbox?.drop());

  /** Writes a delayed row of the parcel in `manager`'s transaction; resolves that transaction's 32-bit id. */
  const addDelayed = async (manager: EntityManager, aggregateId: string): Promise<number> => {
    await app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label: aggregateId }, topic: 'parcels', delayMs: 600_000 });
    const [{ xid }] = await manager.query(`SELECT (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid`);
    return Number(xid);
  };
  const writeDelayed = (aggregateId: string) => app.dataSource.transaction((manager) => addDelayed(manager, aggregateId));
  /** Writes a row the stream owns (`wal.write: 'row'`); resolves it as the stream decodes it (the fields handedOn reads). */
  const addStreamed = async (manager: EntityManager, aggregateId: string): Promise<StreamMessage> => {
    const [id] = await app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label: aggregateId }, topic: 'parcels' });
    // Also sends the INSERT, which may wait for the COMMIT otherwise (writeWithCommit).
    const [row] = await manager.query(`SELECT position::text AS position, (pg_current_xact_id()::text::bigint % 4294967296)::int AS xid FROM outbox_messages WHERE id = $1`, [id]);
    return { id, aggregateType: 'parcel', aggregateId, commit: 1n, index: 0, row: { position: row.position, xid: row.xid } } as StreamMessage;
  };
  /** The same in a transaction kept open until `open.release()`. */
  const holdDelayed = async (aggregateId: string) => {
    let xid = 0;
    const open = await holdTransaction<EntityManager>((work) => app.dataSource.transaction(work), async (manager) => (xid = await addDelayed(manager, aggregateId)));
    return { open, xid };
  };

  it('reports a committed transaction visible and places its row; an open one invisible (both 32-bit ids widened by the epoch)', async () => {
    const [{ epoch }] = await app.dataSource.query(`SELECT (pg_current_xact_id()::text::bigint >> 32)::text AS epoch`);
    expect(epoch).toBe('0');
    const committed = await writeDelayed('c');
    const answer = await overflow.backlogged([parcel('c'), parcel('free')], { mustSee: [committed], inserts: new Map([[committed, 1234n]]) });
    expect(answer.visible).toBe(true);
    expect([...answer.aggregates]).toEqual([aggregateOf(parcel('c'))]);
    expect(answer.heldFrom).toEqual(new Map([[aggregateOf(parcel('c')), 1234n]]));
    // Unknown inserter: held from the start (no position).
    expect((await overflow.held(10, { mustSee: [committed], inserts: new Map() })).heldFrom).toEqual(new Map());

    const { open, xid: openXid } = await holdDelayed('o');
    try {
      expect((await overflow.backlogged([parcel('o')], { mustSee: [committed, openXid], inserts: new Map() })).visible).toBe(false);
      expect((await overflow.held(10, { mustSee: [openXid], inserts: new Map() })).visible).toBe(false);
    } finally {
      open.release();
      await open.done;
    }
    expect((await overflow.held(10, { mustSee: [openXid], inserts: new Map() })).visible).toBe(true);
  });

  it('widens a 32-bit id to the epoch nearest the snapshot\'s xmax, across an epoch boundary and at or past xmax', async () => {
    // Snapshots of epoch 1 and 2 (xmin:xmax:in-progress), as a server that has wrapped would take them.
    const cases: Array<[snapshot: string, xid: number, visible: boolean]> = [
      ['4294967396:4294967400:4294967397', 90, true], // epoch 1, before xmin
      ['4294967396:4294967400:4294967397', 101, false], // in progress
      ['4294967396:4294967400:4294967397', 104, false], // at xmax: committed but not yet visible
      ['4294967396:4294967400:4294967397', 110, false], // past xmax
      ['4294967396:4294967400:4294967397', 4294967290, true], // the epoch before
      ['8589934595:8589934600:8589934596', 4, false],
      ['8589934595:8589934600:8589934596', 3, true],
    ];
    for (const [snapshot, xid, visible] of cases) {
      const [row] = await app.dataSource.query(`SELECT ${visibleInSnapshot('$1', `'${snapshot}'::pg_snapshot`)} AS visible`, [[xid]]);
      expect([snapshot, xid, row.visible]).toEqual([snapshot, xid, visible]);
    }
  });

  it('tells which replayed messages an earlier stream handed on: rows it let go or deleted, WAL messages moved to the table', async () => {
    const [owned, letGo, gone] = await Promise.all(['h-owned', 'h-let-go', 'h-gone'].map((aggregateId) => app.dataSource.transaction((manager) => addStreamed(manager, aggregateId))));
    await overflow.divert([{ message: letGo, attempts: 3, error: 'broker down' }], 0);
    await app.dataSource.query(`DELETE FROM outbox_messages WHERE id = $1`, [gone.id]);
    // WAL messages ('message'): one whose id has a row in the table (as a move writes it), one without.
    await writeDelayed('h-moved');
    const [{ id: movedId }] = await app.dataSource.query(`SELECT id::text AS id FROM outbox_messages WHERE aggregate_id = 'h-moved'`);
    const walMessage = (id: string): StreamMessage => ({ ...owned, id, row: undefined });
    // Read when a stream connects: the WAL's end then, since the table holds rows a stream may have moved.
    const [{ lsn }] = await app.dataSource.query(`SELECT pg_current_wal_lsn()::text AS lsn`);
    expect(await overflow.replayWindow()).toBeGreaterThanOrEqual(parseLsn(lsn));
    const answer = await overflow.handedOn([owned, letGo, gone, walMessage(movedId), walMessage('0190c2a5-1d3e-7000-8000-000000000001')]);
    expect([...answer].sort()).toEqual([letGo.id, gone.id, movedId].sort());
  });

  it('waits for a replayed row whose insert is not visible yet, rather than taking it for gone', async () => {
    let message: StreamMessage | undefined;
    const open = await holdTransaction<EntityManager>((work) => app.dataSource.transaction(work), async (manager) => (message = await addStreamed(manager, 'h-open')));
    // A row moved after it: the window covers the open row's position.
    await writeDelayed('h-after-open');
    await overflow.replayWindow();
    const runs = jest.spyOn(connection, 'run');
    let answered = false;
    try {
      const asking = overflow.handedOn([message!]).finally(() => (answered = true));
      await waitFor('the read made again several times', () => runs.mock.calls.length >= 3);
      expect(answered).toBe(false);
      open.release();
      await open.done;
      expect(await asking).toEqual(new Set());
    } finally {
      open.release();
      runs.mockRestore();
    }
  });

  it('waits, reading again, while a decoded transaction is still open, and answers with its row once it commits', async () => {
    const held = new HeldAggregates(overflow, 100, { retryMs: 2, timeoutMs: 30_000 });
    expect(await held.heldOf([parcel('w')])).toEqual(new Map());
    const reads = jest.spyOn(overflow, 'backlogged');
    const { open, xid: openXid } = await holdDelayed('w');
    let answered = false;
    try {
      // As if the stream had decoded the commit of that transaction before it became visible.
      held.tableWritten({ lsn: 1n, wroteTable: true, xid: openXid, updatedRows: true });
      const reading = held.heldOf([parcel('w')]).finally(() => (answered = true));
      await waitFor('the read made again several times', () => reads.mock.calls.length >= 3);
      expect(answered).toBe(false);
      open.release();
      await open.done;
      expect(await reading).toEqual(new Map([[aggregateOf(parcel('w')), 0n]]));
    } finally {
      open.release();
      reads.mockRestore();
    }
  });
});
