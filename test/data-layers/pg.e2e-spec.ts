import { Pool } from 'pg';
import { describeDataLayer } from './data-layer.scenarios';
import { issueInvoice } from './examples/pg.example';

describeDataLayer({
  name: 'node-postgres',
  async open({ url, schema }) {
    const pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
    return {
      issueInvoice: (outbox, id, correlationId) => issueInvoice(pool, outbox, id, correlationId),
      async inTransaction(work) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await work(client);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        } finally {
          client.release();
        }
      },
      // The pool itself: its statements each run on whichever client is free, in no transaction.
      outsideTransaction: pool,
      close: () => pool.end(),
    };
  },
});
