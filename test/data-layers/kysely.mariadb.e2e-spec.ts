import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import { describeDataLayer } from './data-layer.scenarios';
import { issueInvoice, type BillingDatabase } from './examples/kysely.example';

describeDataLayer(
  {
    name: 'Kysely',
    async open({ url }) {
      const db = new Kysely<BillingDatabase>({ dialect: new MysqlDialect({ pool: createPool({ uri: url, connectionLimit: 4 }) }) });
      return {
        issueInvoice: (outbox, id, correlationId) => issueInvoice(db, outbox, id, correlationId),
        inTransaction: (work) => db.transaction().execute((trx) => work(trx)),
        outsideTransaction: db,
        close: () => db.destroy(),
      };
    },
  },
  'mariadb',
);
