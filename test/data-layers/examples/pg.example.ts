// README "Data layers beyond TypeORM": node-postgres. Compiled by `npm run typecheck`, run by test/data-layers/pg.e2e-spec.ts.
import type { OutboxPublisher } from '@nest-outbox/outbox';
import type { Pool } from 'pg';

export async function issueInvoice(pool: Pool, outbox: OutboxPublisher, id: string, correlationId: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`INSERT INTO invoices (id, status) VALUES ($1, 'issued')`, [id]);
    await outbox.add(client, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id }, topic: 'billing', correlationId });
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
