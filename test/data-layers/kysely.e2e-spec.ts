import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { describeDataLayer } from './data-layer.scenarios';
import { issueInvoice, type BillingDatabase } from './examples/kysely.example';

describeDataLayer({
  name: 'Kysely',
  async open({ url, schema }) {
    const db = new Kysely<BillingDatabase>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 }) }) });
    return {
      issueInvoice: (outbox, id, correlationId) => issueInvoice(db, outbox, id, correlationId),
      inTransaction: (work) => db.transaction().execute((trx) => work(trx)),
      outsideTransaction: db,
      close: () => db.destroy(),
    };
  },
});
