import { Pool } from 'pg';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { inTransaction } from '../data-layers/examples/pg.example';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

const note = (aggregateId: string, label: string) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic: 'parcels' });

/**
 * In the WAL mode, a message added in another data layer's transaction goes to the stream like a
 * TypeORM one: a row in the table would be published by the table relay, out of order with the
 * same aggregate's streamed messages.
 */
describe('WAL delivery mode: OutboxPublisher.add in a node-postgres transaction', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  let pool: Pool;
  const transport = new RecordingOutboxTransport();

  beforeAll(async () => {
    sandbox = await walSandbox('wal_layers');
    app = await sandbox.start({ transport, batchSize: 50 });
    pool = new Pool({ connectionString: sandbox.url, options: `-c search_path=${sandbox.schema}`, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await sandbox?.drop();
  });

  it('streams the message in commit order with a TypeORM add of the same aggregate, and leaves no row; a rollback streams nothing', async () => {
    await inTransaction(pool, (client) => app.publisher.add(client, note('mixed-1', 'pg-first')));
    await app.dataSource.transaction((manager) => app.publisher.add(manager, note('mixed-1', 'typeorm-second')));
    await inTransaction(pool, (client) => app.publisher.add(client, note('mixed-1', 'pg-third')));
    await expect(
      inTransaction(pool, async (client) => {
        await app.publisher.add(client, note('mixed-1', 'rolled-back'));
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    await inTransaction(pool, (client) => app.publisher.add(client, note('mixed-1', 'pg-fourth')));

    const labels = await waitFor('four events of mixed-1', () => {
      const seen = transport.published.filter((m) => m.key === 'mixed-1').map((m) => (m.envelope.payload as { label: string }).label);
      return seen.length >= 4 && seen;
    });
    expect(labels).toEqual(['pg-first', 'typeorm-second', 'pg-third', 'pg-fourth']);
    // wal.write 'row': the stream deletes its rows once the broker acknowledged them.
    await waitFor('no outbox row left', async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n) === 0);
  });
});
