import type { Provider } from '@nestjs/common';
import { Pool } from 'pg';
import { outboxDdl } from '@nest-outbox/outbox/migrations';
import { settings } from '../settings.js';

export const LATAM_POOL = Symbol('LATAM_POOL');

/**
 * The app's own pool on the latam database, for its transactions. An outbox declared with
 * `connection` creates no table: here the pool's factory creates the outbox table (the statements
 * `npx nest-outbox sql --dialect postgres` prints) and the app's, when they are missing. Providers
 * are made before any module starts, so the tables are there when the latam relay first reads.
 * An app with migrations of its own puts the same statements there (docs/migrations.md).
 */
export const latamPool: Provider = {
  provide: LATAM_POOL,
  useFactory: async () => {
    const pool = new Pool({ connectionString: settings.latamDatabaseUrl });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('regions-latam-tables'))`); // instances starting together take turns
      const { rows } = await client.query<{ found: string | null }>(`SELECT to_regclass('outbox_messages')::text AS found`);
      if (rows[0].found === null) for (const statement of outboxDdl({ dialect: 'postgres' }).up) await client.query(statement);
      await client.query('CREATE TABLE IF NOT EXISTS refunds (order_id varchar(36) PRIMARY KEY, refunded_at timestamptz NOT NULL DEFAULT now())');
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
    return pool;
  },
};
