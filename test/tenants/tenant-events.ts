import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { OutboxTenants } from '@nest-outbox/outbox/tenants';

/**
 * Commits `count` events of the tenant in its database (at `url`, straight to it), then wakes its
 * relay; returns their aggregate ids, one aggregate each, which the Kafka reader finds them by.
 */
export async function commitTenantEvents(outboxes: OutboxTenants, tenant: string, url: string, count = 1): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    const ids = Array.from({ length: count }, () => `${tenant}-${randomUUID()}`);
    await outboxes.add(tenant, client, ids.map((id) => ({ type: 'tenants.note-written', aggregateType: 'note', aggregateId: id, payload: { tenant, id } })));
    await client.query('COMMIT');
    void outboxes.wake(tenant);
    return ids;
  } finally {
    await client.end();
  }
}
