// docs/data-layers.md: the inbox, here with Kysely. Compiled by `npm run typecheck`.
import { OutboxDataLayerInbox, type OutboxEnvelope } from '@nest-outbox/outbox';
import type { Kysely } from 'kysely';

export interface ShippingDatabase {
  shipments: { order_id: string };
}

const inbox = new OutboxDataLayerInbox(); // the outbox_inbox table of CreateInboxTable

export async function onOrderPaid(db: Kysely<ShippingDatabase>, envelope: OutboxEnvelope): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const outcome = await inbox.process(trx, envelope, 'shipping.ship-order', () =>
      trx.insertInto('shipments').values({ order_id: envelope.aggregateId }).execute(),
    );
    if (outcome.duplicate) return; // already processed: acknowledge and move on
  });
}
