// docs/data-layers.md: Kysely. Compiled by `npm run typecheck`, run by test/data-layers/kysely.e2e-spec.ts.
import type { OutboxPublisher } from '@nest-outbox/outbox';
import type { Kysely } from 'kysely';

export interface BillingDatabase {
  invoices: { id: string; status: string };
}

export async function issueInvoice(db: Kysely<BillingDatabase>, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('invoices').values({ id, status: 'issued' }).execute();
    await outbox.add(trx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}
