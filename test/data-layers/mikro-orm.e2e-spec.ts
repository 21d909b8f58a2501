import { MikroORM } from '@mikro-orm/postgresql';
import { describeDataLayer } from './data-layer.scenarios';
import { InvoiceSchema, issueInvoice } from './examples/mikro-orm.example';

describeDataLayer({
  name: 'MikroORM',
  async open({ url, schema }) {
    const orm = await MikroORM.init({
      clientUrl: url,
      entities: [InvoiceSchema],
      driverOptions: { options: `-c search_path=${schema}` },
      pool: { max: 4 },
      allowGlobalContext: true,
      debug: false,
    });
    return {
      issueInvoice: (outbox, id, correlationId) => issueInvoice(orm.em.fork(), outbox, id, correlationId),
      inTransaction: (work) => orm.em.fork().transactional((em) => work(em)),
      outsideTransaction: orm.em.fork(),
      close: () => orm.close(true),
    };
  },
});
