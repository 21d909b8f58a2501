import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { OutboxDataLayerInbox } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { createOutboxHarness, type OutboxHarness } from '../support/outbox-harness';
import { issueInvoice, type BillingDatabase } from './examples/kysely.example';

/**
 * SQLite through a layer other than TypeORM: Kysely on its own better-sqlite3 connection to the
 * file the module's TypeORM data source relays from. SQLite lets one writer in at a time, so no
 * aggregate lock is taken: positions follow commit order by themselves.
 */
describe('OutboxPublisher.add and OutboxDataLayerInbox in a Kysely transaction, on SQLite', () => {
  let harness: OutboxHarness;
  let db: Kysely<BillingDatabase>;
  const inbox = new OutboxDataLayerInbox();

  beforeAll(async () => {
    harness = await createOutboxHarness('sqlite');
    await harness.dataSource.query('CREATE TABLE invoices (id text PRIMARY KEY, status text NOT NULL)');
    for (const statement of inboxDialectFor('better-sqlite3', 'outbox_inbox').createTable()) await harness.dataSource.query(statement);
    db = new Kysely<BillingDatabase>({ dialect: new SqliteDialect({ database: new Database(harness.dataSource.options.database as string) }) });
  });

  afterAll(async () => {
    await db?.destroy();
    await harness?.close();
  });

  const rowsOf = async (aggregateId: string) => (await harness.rows()).filter((row) => row.aggregateId === aggregateId);

  it('commits the invoice and its event together, rolls both back together, and the relay publishes the committed one', async () => {
    const committed = `inv-${randomUUID()}`;
    await issueInvoice(db, harness.publisher, committed, 'corr-sqlite');
    const rolledBack = `inv-${randomUUID()}`;
    const boom = new Error('the use case failed');
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('invoices').values({ id: rolledBack, status: 'issued' }).execute();
        await harness.publisher.add(trx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: rolledBack, payload: {}, topic: 'billing' });
        throw boom;
      }),
    ).rejects.toBe(boom);

    const [row] = await rowsOf(committed);
    expect(row).toMatchObject({ eventType: 'billing.invoice-issued', aggregateId: committed, destination: 'billing', correlationId: 'corr-sqlite', status: 'pending' });
    expect(await rowsOf(rolledBack)).toEqual([]);
    expect(await db.selectFrom('invoices').select('id').execute()).toEqual([{ id: committed }]);

    const transport = new RecordingOutboxTransport();
    await harness.relay('sqlite-relay', transport).trigger();
    expect(transport.published.map((message) => message.envelope)).toEqual([expect.objectContaining({ id: row.id, aggregateId: committed, correlationId: 'corr-sqlite', payload: { id: committed } })]);
  });

  it('runs an inbox work once per message', async () => {
    const envelope = { id: randomUUID(), type: 'billing.invoice-issued' };
    let runs = 0;
    const deliver = () => db.transaction().execute((trx) => inbox.process(trx, envelope, 'shipping.ship-invoice', () => (runs += 1)));
    expect(await deliver()).toEqual({ duplicate: false, result: 1 });
    expect(await deliver()).toEqual({ duplicate: true });
    expect(runs).toBe(1);
  });
});
