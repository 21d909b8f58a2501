import { randomBytes } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { Pool } from 'pg';
import { dropWalSlot } from '../../libs/outbox/src/wal/wal-slot.setup';
import { OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { inTransaction } from '../data-layers/examples/pg.example';
import { postgresAdmin } from '../support/databases';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';

/**
 * The WAL delivery mode without TypeORM: the slot is made and read over `connection: { pool }`
 * (its replication connection takes the pool's own settings), and node-postgres transactions stream.
 */
describe('WAL delivery mode with connection: { pool }, without TypeORM', () => {
  const url = requireService('postgres');
  const schema = `wal_conn_${randomBytes(5).toString('hex')}`;
  const slotName = `${schema}_slot`;
  const transport = new RecordingOutboxTransport();
  let pool: Pool;
  let module: TestingModule | undefined;

  beforeAll(async () => {
    await postgresAdmin(url, `CREATE SCHEMA ${schema}`);
    for (const sql of tableDialectFor('postgres', OutboxTable.on('postgres', { tableName: 'outbox_messages', schema })).createTable()) await postgresAdmin(url, sql);
    pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
    module = await Test.createTestingModule({
      imports: [OutboxModule.forRoot({ connection: { pool }, schema, delivery: 'wal', wal: { slotName }, transport, pollIntervalMs: 60_000 })],
    })
      .setLogger(silentLogger)
      .compile();
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    const admin = new Pool({ connectionString: url, max: 1 });
    try {
      // The server frees a slot a moment after its reader disconnects.
      await waitFor('the slot to be released', async () => (await admin.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active', [slotName])).rowCount === 0);
      await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName, publicationName: slotName });
    } finally {
      await admin.end();
    }
    await pool?.end();
    await postgresAdmin(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it('streams committed messages in commit order, leaves no row once they are published, and streams nothing of a rollback', async () => {
    const outbox = module!.get(OutboxPublisher);
    const note = (label: string) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'wal-conn-1', payload: { label }, topic: 'parcels' });
    await inTransaction(pool, (client) => outbox.add(client, note('first')));
    await expect(
      inTransaction(pool, async (client) => {
        await outbox.add(client, note('rolled-back'));
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    await inTransaction(pool, (client) => outbox.add(client, note('second')));
    const labels = await waitFor('two streamed events', () => {
      const seen = transport.published.map((message) => (message.envelope.payload as { label: string }).label);
      return seen.length >= 2 && seen;
    });
    expect(labels).toEqual(['first', 'second']);
    // With wal.write 'row' the stream deletes its rows once the broker has acknowledged them, a moment after the publish.
    await waitFor('the streamed rows to be deleted', async () => (await pool.query('SELECT count(*)::int AS n FROM outbox_messages')).rows[0].n === 0);
  });
});
