// docs/data-layers.md: node-postgres. Compiled by `npm run typecheck`, run by test/data-layers/pg.e2e-spec.ts.
import type { OutboxPublisher } from '@nest-outbox/outbox';
import type { Pool, PoolClient } from 'pg';

/** BEGIN … COMMIT on one client of the pool; ROLLBACK when `work` throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

export async function issueInvoice(pool: Pool, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(`INSERT INTO invoices (id, status) VALUES ($1, 'issued')`, [id]);
    await outbox.add(client, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
  });
}
