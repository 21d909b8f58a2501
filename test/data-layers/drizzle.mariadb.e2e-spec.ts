import type { OutboxPublisher } from '@nest-outbox/outbox';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import { createPool } from 'mysql2';
import { describeDataLayer } from './data-layer.scenarios';

const invoices = mysqlTable('invoices', { id: varchar('id', { length: 64 }).primaryKey(), status: varchar('status', { length: 32 }).notNull() });

/** The README's Drizzle example on mysql2: only the table and the database type differ from PostgreSQL. */
async function issueInvoice(db: MySql2Database, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.insert(invoices).values({ id, status: 'issued' });
    await outbox.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}

describeDataLayer(
  {
    name: 'Drizzle',
    async open({ url }) {
      const pool = createPool({ uri: url, connectionLimit: 4 });
      const db = drizzle({ client: pool });
      return {
        issueInvoice: (outbox, id, correlationId) => issueInvoice(db, outbox, id, correlationId),
        inTransaction: (work) => db.transaction((tx) => work(tx)),
        outsideTransaction: db,
        close: () => new Promise<void>((resolve, reject) => pool.end((error) => (error ? reject(error) : resolve()))),
      };
    },
  },
  'mariadb',
);
