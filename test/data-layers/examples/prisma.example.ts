// docs/data-layers.md: Prisma. Compiled by `npm run typecheck`, run by test/data-layers/prisma.e2e-spec.ts.
import type { OutboxDataLayerTransaction, OutboxPublisher } from '@nest-outbox/outbox';

/** The part of your generated `PrismaClient` this example uses (`prisma generate` writes the real one). */
export interface InvoicePrisma {
  $transaction<R>(work: (tx: InvoiceTx) => Promise<R>): Promise<R>;
}
type InvoiceTx = { invoice: { create(args: { data: { id: string; status: string } }): PromiseLike<unknown> } } & OutboxDataLayerTransaction;

export async function issueInvoice(prisma: InvoicePrisma, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.invoice.create({ data: { id, status: 'issued' } });
    await outbox.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}
