import type { OutboxPublisher } from '@nest-outbox/outbox';
import { EntitySchema, MikroORM, type EntityManager } from '@mikro-orm/mysql';
import { describeDataLayer } from './data-layer.scenarios';

interface Invoice {
  id: string;
  status: string;
}

const InvoiceSchema = new EntitySchema<Invoice>({
  name: 'Invoice',
  tableName: 'invoices',
  properties: { id: { type: 'string', primary: true }, status: { type: 'string' } },
});

/** The README's MikroORM example on @mikro-orm/mysql (which also drives MariaDB). */
async function issueInvoice(em: EntityManager, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await em.transactional(async (tx) => {
    tx.create(InvoiceSchema, { id, status: 'issued' });
    await outbox.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}

describeDataLayer(
  {
    name: 'MikroORM',
    async open({ url }) {
      const orm = await MikroORM.init({ clientUrl: url, entities: [InvoiceSchema], pool: { max: 4 }, allowGlobalContext: true, debug: false });
      return {
        issueInvoice: (outbox, id, correlationId) => issueInvoice(orm.em.fork(), outbox, id, correlationId),
        inTransaction: (work) => orm.em.fork().transactional((em) => work(em)),
        outsideTransaction: orm.em.fork(),
        close: () => orm.close(true),
      };
    },
  },
  'mariadb',
);
