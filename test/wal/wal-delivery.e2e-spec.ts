import { Client } from 'pg';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { GatedTransport } from '../support/gated.transport';
import { Parcel } from '../support/parcel.fixtures';
import { staysAtMostAfterGrace, waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

const note = (aggregateId: string, label: string) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic: 'parcels' });
const labels = (transport: { published: OutgoingMessage[] }, aggregateId?: string) =>
  transport.published.filter((m) => aggregateId === undefined || m.key === aggregateId).map((m) => (m.envelope.payload as { label?: string }).label);

describe.each([['row'], ['message']] as const)("WAL delivery mode (write '%s'): capture and stream on PostgreSQL with wal_level = logical", (write) => {
  let sandbox: WalSandbox;
  let app: WalApp;
  // Acknowledges every message at once but the one labelled 'held', which it holds until the test opens it.
  const transport = new GatedTransport('held');

  beforeAll(async () => {
    sandbox = await walSandbox('wal_delivery');
    app = await sandbox.start({ transport, batchSize: 50, wal: { write } });
  });
  afterAll(() => sandbox?.drop());

  it('publishes an aggregate save and an explicit add with the usual envelope, and leaves no outbox row', async () => {
    const parcel = Parcel.register('wal-1', 500);
    await app.dataSource.getRepository(Parcel).save(parcel);
    await app.dataSource.transaction((manager) => app.publisher.add(manager, note('explicit-1', 'added')));
    const saved = await waitFor('the saved event', () => transport.published.find((m) => m.key === parcel.id));
    expect(saved.envelope).toMatchObject({ type: 'parcels.parcel-registered', aggregateType: 'parcel', aggregateId: parcel.id, payload: { parcelId: parcel.id, weightGrams: 500 } });
    expect(saved.destination).toBe('parcels');
    expect(saved.headers['outbox-event-type']).toBe('parcels.parcel-registered');
    await waitFor('the added event', () => labels(transport, 'explicit-1').includes('added'));
    // write 'row': the stream deletes its rows once the broker acknowledged them; 'message' writes none.
    await waitFor('an empty outbox table', async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n) === 0);
  });

  it('publishes one aggregate in commit order when the transaction ids are in the opposite order', async () => {
    // The long-running transaction takes its id first, writes, and commits last.
    const late = app.dataSource.createQueryRunner();
    await late.connect();
    await late.startTransaction();
    const lateXid = BigInt((await late.query(`SELECT txid_current() AS x`))[0].x);
    await app.publisher.add(late.manager, note('order-1', 'second'));
    if (write === 'row') {
      // The outbox's INSERT may wait to go out with the COMMIT (writeWithCommit, on a connection that
      // has prepared it): a statement sent now makes it run, and take the aggregate's lock here.
      await late.query('SELECT 1');
      // Rows keep the aggregate's lock, as in the table mode (their positions must follow commit
      // order should a new slot hand them to the table relay): the other writer waits for this one.
      const early = app.dataSource.transaction((manager) => app.publisher.add(manager, note('order-1', 'first')));
      await waitFor('the second writer waiting for the aggregate lock', async () => (await app.dataSource.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).length > 0);
      await late.commitTransaction();
      await late.release();
      await early;
      await waitFor('both events of order-1', () => labels(transport, 'order-1').length === 2);
      expect(labels(transport, 'order-1')).toEqual(['second', 'first']);
      return;
    }
    let earlyXid = 0n;
    await app.dataSource.transaction(async (manager) => {
      earlyXid = BigInt((await manager.query(`SELECT txid_current() AS x`))[0].x);
      await app.publisher.add(manager, note('order-1', 'first'));
    });
    await waitFor('the early commit streamed', () => labels(transport, 'order-1').includes('first'));
    await late.commitTransaction();
    await late.release();
    await waitFor('both events of order-1', () => labels(transport, 'order-1').length === 2);
    expect(lateXid).toBeLessThan(earlyXid);
    expect(labels(transport, 'order-1')).toEqual(['first', 'second']);
  });

  it('publishes nothing of a rolled-back transaction', async () => {
    await expect(
      app.dataSource.transaction(async (manager) => {
        await app.publisher.add(manager, note('rollback-1', 'never'));
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    await app.dataSource.transaction((manager) => app.publisher.add(manager, note('rollback-1', 'kept')));
    await waitFor('the committed event after the rollback', () => labels(transport, 'rollback-1').includes('kept'));
    expect(labels(transport, 'rollback-1')).toEqual(['kept']);
  });

  it('confirms the slot past a commit only once the broker has acknowledged its messages', async () => {
    const admin = new Client({ connectionString: sandbox.url });
    await admin.connect();
    const slotPast = async (lsn: string) =>
      (await admin.query(`SELECT confirmed_flush_lsn >= $2::pg_lsn AS past FROM pg_replication_slots WHERE slot_name = $1`, [sandbox.slotName, lsn])).rows[0]?.past === true;
    try {
      await app.dataSource.transaction((manager) => app.publisher.add(manager, note('confirm-1', 'held')));
      const afterCommit = (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn as string;
      await waitFor('the event to reach the transport, which holds its acknowledgement', () => transport.reached);
      // More WAL behind the held commit: a stream that confirmed what it had read, not what was acknowledged, would pass it now.
      await admin.query(`CREATE TABLE ${sandbox.schema}.after_held (n integer)`);
      await admin.query(`INSERT INTO ${sandbox.schema}.after_held SELECT generate_series(1, 20)`);
      await staysAtMostAfterGrace('slot confirmed past the commit while its message is unacknowledged (1 = yes)', async () => ((await slotPast(afterCommit)) ? 1 : 0), 0);
      expect(labels(transport, 'confirm-1')).toEqual([]);
      transport.open();
      await waitFor('the event published', () => labels(transport, 'confirm-1').includes('held'));
      await waitFor('the slot confirmed past the commit', () => slotPast(afterCommit));
    } finally {
      transport.open();
      await admin.end();
    }
  });

  it('confirms the slot past WAL without outbox events too, so an idle stream does not hold WAL', async () => {
    const admin = new Client({ connectionString: sandbox.url });
    await admin.connect();
    try {
      await admin.query(`CREATE TABLE ${sandbox.schema}.unrelated (n integer)`);
      for (let n = 0; n < 20; n++) await admin.query(`INSERT INTO ${sandbox.schema}.unrelated VALUES ($1)`, [n]);
      const afterWrites = (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn as string;
      let slot: Record<string, unknown> | undefined;
      await waitFor('the slot confirmed past WAL with no outbox event', async () => {
        const { rows } = await admin.query(
          `SELECT confirmed_flush_lsn >= $2::pg_lsn AS past, confirmed_flush_lsn::text AS confirmed, active, pg_current_wal_lsn()::text AS now
             FROM pg_replication_slots WHERE slot_name = $1`,
          [sandbox.slotName, afterWrites],
        );
        slot = rows[0];
        return rows[0]?.past === true;
      }).catch((error: Error) => {
        throw new Error(`${error.message}; written up to ${afterWrites}, slot ${JSON.stringify(slot)}`);
      });
    } finally {
      await admin.end();
    }
  });
});
