import { randomUUID } from 'node:crypto';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { OutboxDataLayerInbox } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { createOutboxHarness, type OutboxHarness } from '../support/outbox-harness';
import { issueInvoice, type InvoicePrisma } from './examples/prisma.example';
import { generatePrismaClient } from './prisma/generate-client';

/** The generated client, typed by the little these tests use: it does not exist before `generatePrismaClient`. */
type GeneratedPrismaClient = InvoicePrisma & { $disconnect(): Promise<void>; invoice: { findMany(): Promise<Array<{ id: string }>> } };

/**
 * SQLite through Prisma (driver adapter @prisma/adapter-better-sqlite3, a connection of its own to
 * the file the module's TypeORM data source relays from). SQLite lets one writer in at a time, so no
 * aggregate lock is taken: positions follow commit order by themselves.
 */
describe('OutboxPublisher.add and OutboxDataLayerInbox in a Prisma transaction, on SQLite', () => {
  let harness: OutboxHarness;
  let prisma: GeneratedPrismaClient;
  const inbox = new OutboxDataLayerInbox();

  beforeAll(async () => {
    harness = await createOutboxHarness('sqlite');
    await harness.dataSource.query('CREATE TABLE invoices (id text PRIMARY KEY, status text NOT NULL)');
    for (const statement of inboxDialectFor('better-sqlite3', 'outbox_inbox').createTable()) await harness.dataSource.query(statement);
    const { PrismaClient } = require(generatePrismaClient('sqlite')) as { PrismaClient: new (options: { adapter: PrismaBetterSqlite3 }) => GeneratedPrismaClient };
    prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${harness.dataSource.options.database as string}` }) });
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await harness?.close();
  });

  const rowsOf = async (aggregateId: string) => (await harness.rows()).filter((row) => row.aggregateId === aggregateId);

  it('commits the invoice and its event together, rolls both back together, and the relay publishes the committed one', async () => {
    const committed = `inv-${randomUUID()}`;
    await issueInvoice(prisma, harness.publisher, committed, 'corr-prisma-sqlite');
    const rolledBack = `inv-${randomUUID()}`;
    const boom = new Error('the use case failed');
    await expect(
      prisma.$transaction(async (tx) => {
        await tx.invoice.create({ data: { id: rolledBack, status: 'issued' } });
        await harness.publisher.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: rolledBack, payload: {}, topic: 'billing' });
        throw boom;
      }),
    ).rejects.toBe(boom);

    const [row] = await rowsOf(committed);
    expect(row).toMatchObject({ eventType: 'billing.invoice-issued', aggregateId: committed, destination: 'billing', correlationId: 'corr-prisma-sqlite', status: 'pending' });
    expect(await rowsOf(rolledBack)).toEqual([]);
    expect((await prisma.invoice.findMany()).map((invoice) => invoice.id)).toEqual([committed]);

    const transport = new RecordingOutboxTransport();
    await harness.relay('prisma-sqlite-relay', transport).trigger();
    expect(transport.published.map((message) => message.envelope)).toEqual([expect.objectContaining({ id: row.id, aggregateId: committed, correlationId: 'corr-prisma-sqlite', payload: { id: committed } })]);
  });

  it('refuses the client itself, whose raw queries would each commit alone', async () => {
    await expect(harness.publisher.add(prisma as never, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: 'x', payload: {}, topic: 'billing' })).rejects.toThrow(
      /not inside a transaction.*prisma\.\$transaction/,
    );
  });

  it('runs an inbox work once per message', async () => {
    const envelope = { id: randomUUID(), type: 'billing.invoice-issued' };
    let runs = 0;
    const deliver = () => prisma.$transaction((tx) => inbox.process(tx, envelope, 'shipping.ship-invoice', () => (runs += 1)));
    expect(await deliver()).toEqual({ duplicate: false, result: 1 });
    expect(await deliver()).toEqual({ duplicate: true });
    expect(runs).toBe(1);
  });
});
