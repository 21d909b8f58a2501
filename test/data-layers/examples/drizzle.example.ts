// docs/data-layers.md: Drizzle. Compiled by `npm run typecheck`, run by test/data-layers/drizzle.e2e-spec.ts.
import type { OutboxPublisher } from '@nest-outbox/outbox';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';

export const invoices = pgTable('invoices', { id: text('id').primaryKey(), status: text('status').notNull() });

export async function issueInvoice(db: NodePgDatabase, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.insert(invoices).values({ id, status: 'issued' });
    await outbox.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}
