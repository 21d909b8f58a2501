import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable } from '@nest-outbox/outbox';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { CreateOrderTables1767225600001 } from '../../apps/order-service/src/database/create-order-tables.migration';
import { Order, OrderLine } from '../../apps/order-service/src/orders/order.entity';
import type { OutboxRow } from './analysis';

// The chaos run's own reads and writes of its schema: the migration, and the rows the checks compare.

export async function withClient<T>(url: string, schema: string | undefined, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function rowsById(url: string, schema: string, ids: string[]) {
  return withClient(url, schema, async (client) => {
    const { rows } = await client.query(
      `SELECT position::text AS position, id, status, lease_owner AS "leaseOwner", published_at::text AS "publishedAt",
              (extract(epoch FROM published_at) * 1000)::bigint::text AS "publishedMs", attempts
         FROM outbox_messages WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return rows as Array<{ position: string; id: string; status: string; leaseOwner: string | null; publishedAt: string | null; publishedMs: string | null; attempts: number; publishedBy?: string }>;
  });
}

export async function outboxRows(url: string, schema: string): Promise<OutboxRow[]> {
  return withClient(url, schema, async (client) => {
    const { rows } = await client.query(
      `SELECT position::text AS position, id, aggregate_id AS "aggregateId", event_type AS type, status, attempts, last_error AS "lastError", lease_owner AS "leaseOwner"
         FROM outbox_messages ORDER BY position`,
    );
    return rows as OutboxRow[];
  });
}

export async function statusCounts(url: string, schema: string): Promise<Record<string, number>> {
  return withClient(url, schema, async (client) => {
    const { rows } = await client.query(`SELECT status, count(*)::int AS n FROM outbox_messages GROUP BY status`);
    return Object.fromEntries(rows.map((row: { status: string; n: number }) => [row.status, row.n]));
  });
}

export async function migrate(url: string, schema: string): Promise<void> {
  await withClient(url, undefined, (client) => client.query(`CREATE SCHEMA ${schema}`));
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    schema,
    extra: { options: `-c search_path=${schema}` },
    entities: [Order, OrderLine, outboxMessageEntity()],
    migrations: [CreateOutboxTable, CreateOrderTables1767225600001, CreateInboxTable, CreateInboxPoisonTable],
    logging: false,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}
