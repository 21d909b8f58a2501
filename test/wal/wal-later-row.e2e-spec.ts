// Watched (not replaced): tells when the stream has decoded a commit that wrote the table.
import { HeldAggregates } from '../../libs/outbox/src/core/stream/held-aggregates';
import { GatedTransport } from '../support/gated.transport';
import { waitFor } from '../support/wait-for';
import { noteParcel, parcelRows, walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

// The reader decodes ahead of the batch being published. A delayed message goes to the table and
// holds its aggregate's later events; one committed AFTER a streamed message of that aggregate must
// not hold that message, even when the stream checks the message only once the delayed row exists.
describe.each([['row'], ['message']] as const)("WAL delivery mode (write '%s'): a delayed message committed after a streamed one does not hold it", (write) => {
  let sandbox: WalSandbox;
  let app: WalApp;
  // b0 waits in the transport: the stream stalls there while a1, the delayed a2 and a3 commit.
  const transport = new GatedTransport('b0');

  beforeAll(async () => {
    sandbox = await walSandbox('wal_later');
    app = await sandbox.start({ transport, batchSize: 1, pollIntervalMs: 100, wal: { write } });
  });
  afterAll(() => sandbox?.drop());

  it('publishes a1 at once, then the delayed a2 when due, then a3 (committed after a2) behind it', async () => {
    const decoded = jest.spyOn(HeldAggregates.prototype, 'tableWritten');
    try {
      await noteParcel(app, 'b', 'b0');
      await waitFor('b0 to reach the transport, which holds it', () => transport.reached);
      await noteParcel(app, 'a', 'a1');
      const delayedXid = await app.dataSource.transaction(async (manager) => {
        await app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'a', payload: { label: 'a2' }, topic: 'parcels', delayMs: 3_000 });
        const [{ xid }] = await manager.query(`SELECT (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid`);
        return Number(xid);
      });
      await noteParcel(app, 'a', 'a3');
      await waitFor('the stream to decode the delayed row\'s commit', () => decoded.mock.calls.some(([commit]) => commit?.xid === delayedXid));

      transport.open();
      await waitFor('a1 published', () => transport.labels('a').includes('a1'));
      // Not held behind the delayed a2 (committed after it): a2 is still waiting for its delay.
      expect(transport.labels('a')).toEqual(['a1']);
      expect((await parcelRows(app, 'a')).find((row) => row.label === 'a2')?.status).toBe('pending');
      // A streamed message leaves no row behind (write 'row': the stream deletes it once published).
      await waitFor("a1's row gone", async () => !(await parcelRows(app, 'a')).some((row) => row.label === 'a1'));

      await waitFor('a2 and a3 published from the table', () => transport.labels('a').length === 3);
      expect(transport.labels('a')).toEqual(['a1', 'a2', 'a3']);
      expect(transport.labels('b')).toEqual(['b0']);
    } finally {
      decoded.mockRestore();
    }
  });
});
