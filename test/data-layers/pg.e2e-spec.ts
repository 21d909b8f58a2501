import { Pool } from 'pg';
import { describeDataLayer } from './data-layer.scenarios';
import { inTransaction, issueInvoice } from './examples/pg.example';

describeDataLayer({
  name: 'node-postgres',
  async open({ url, schema }) {
    const pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
    return {
      issueInvoice: (outbox, id, correlationId) => issueInvoice(pool, outbox, id, correlationId),
      inTransaction: (work) => inTransaction(pool, work),
      // The pool itself: its statements each run on whichever client is free, in no transaction.
      outsideTransaction: pool,
      close: () => pool.end(),
    };
  },
});
