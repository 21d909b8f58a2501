import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { describeDataLayer } from './data-layer.scenarios';
import { issueInvoice } from './examples/drizzle.example';

describeDataLayer({
  name: 'Drizzle',
  async open({ url, schema }) {
    const pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
    const db = drizzle(pool);
    return {
      issueInvoice: (outbox, id, correlationId) => issueInvoice(db, outbox, id, correlationId),
      inTransaction: (work) => db.transaction((tx) => work(tx)),
      outsideTransaction: db,
      close: () => pool.end(),
    };
  },
});
