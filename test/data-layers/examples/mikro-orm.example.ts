// docs/data-layers.md: MikroORM. Compiled by `npm run typecheck`, run by test/data-layers/mikro-orm.e2e-spec.ts.
import type { OutboxPublisher } from '@nest-outbox/outbox';
import { EntitySchema, type EntityManager } from '@mikro-orm/postgresql';

export interface Invoice {
  id: string;
  status: string;
}

export const InvoiceSchema = new EntitySchema<Invoice>({
  name: 'Invoice',
  tableName: 'invoices',
  properties: { id: { type: 'string', primary: true }, status: { type: 'string' } },
});

export async function issueInvoice(em: EntityManager, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await em.transactional(async (tx) => {
    tx.create(InvoiceSchema, { id, status: 'issued' });
    await outbox.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}
