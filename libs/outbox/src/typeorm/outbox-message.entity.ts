import type { EntitySchema } from 'typeorm';
import { DEFAULT_OUTBOX_TABLE, OutboxTable, type OutboxTableLocation } from '../sql/dialects/outbox-table';
import type { OutboxMessageStatus } from '../core/outbox-message';
import { loadTypeOrm } from '../adapters/typeorm/typeorm.loader';

export { DEFAULT_OUTBOX_TABLE };

/**
 * One outbox row as TypeORM reads it, for inspection and admin queries. Timestamps come back
 * as `Date` on PostgreSQL and as UTC text on SQLite. The relay itself uses its own SQL.
 */
export interface OutboxMessageRow {
  position: string;
  id: string;
  eventType: string;
  eventVersion: number;
  aggregateType: string;
  aggregateId: string;
  transport: string;
  destination: string;
  occurredAt: Date | string;
  correlationId: string | null;
  causationId: string | null;
  tenantId: string | null;
  headers: string;
  payload: string;
  status: OutboxMessageStatus;
  attempts: number;
  lastError: string | null;
  /** JSON array of `{ at, error }`, one entry per failed attempt. */
  errorHistory: string | null;
  nextAttemptAt: Date | string | null;
  leaseOwner: string | null;
  leaseToken: string | null;
  leaseExpiresAt: Date | string | null;
  createdAt: Date | string;
  publishedAt: Date | string | null;
  deadAt: Date | string | null;
}

const entities = new Map<string, EntitySchema<OutboxMessageRow>>();

/**
 * The entity of an outbox table, one per table name and schema (the same object on every call, so
 * that the module and an explicit entity list agree). The table's DDL comes from the shipped
 * migration, which knows each database's types; `synchronize` leaves this table alone.
 */
export function outboxMessageEntity(location: string | OutboxTableLocation = DEFAULT_OUTBOX_TABLE): EntitySchema<OutboxMessageRow> {
  const table = OutboxTable.of(location);
  const key = table.toString();
  let entity = entities.get(key);
  if (!entity) {
    const { EntitySchema } = loadTypeOrm('outboxMessageEntity()');
    entity = new EntitySchema<OutboxMessageRow>({
      name: entityName(table),
      tableName: table.name,
      schema: table.schema,
      synchronize: false,
      columns: {
        position: { type: 'bigint', primary: true, generated: 'increment' },
        id: { type: 'varchar', length: 36, unique: true },
        eventType: { name: 'event_type', type: 'varchar', length: 255 },
        eventVersion: { name: 'event_version', type: 'integer' },
        aggregateType: { name: 'aggregate_type', type: 'varchar', length: 255 },
        aggregateId: { name: 'aggregate_id', type: 'varchar', length: 255 },
        transport: { type: 'varchar', length: 64 },
        destination: { type: 'varchar', length: 255 },
        occurredAt: { name: 'occurred_at', type: 'varchar' },
        correlationId: { name: 'correlation_id', type: 'varchar', length: 255, nullable: true },
        causationId: { name: 'causation_id', type: 'varchar', length: 255, nullable: true },
        tenantId: { name: 'tenant_id', type: 'varchar', length: 255, nullable: true },
        headers: { type: 'text' },
        payload: { type: 'text' },
        status: { type: 'varchar', length: 16 },
        attempts: { type: 'integer' },
        lastError: { name: 'last_error', type: 'text', nullable: true },
        errorHistory: { name: 'error_history', type: 'text', nullable: true },
        nextAttemptAt: { name: 'next_attempt_at', type: 'varchar', nullable: true },
        leaseOwner: { name: 'lease_owner', type: 'varchar', length: 64, nullable: true },
        leaseToken: { name: 'lease_token', type: 'varchar', length: 36, nullable: true },
        leaseExpiresAt: { name: 'lease_expires_at', type: 'varchar', nullable: true },
        createdAt: { name: 'created_at', type: 'varchar' },
        publishedAt: { name: 'published_at', type: 'varchar', nullable: true },
        deadAt: { name: 'dead_at', type: 'varchar', nullable: true },
      },
    });
    entities.set(key, entity);
  }
  return entity;
}

// Entity names are unique within a data source: two outboxes of one data source, in two schemas, need two.
function entityName({ name, schema }: OutboxTable): string {
  if (schema !== undefined) return `OutboxMessage_${schema}_${name}`;
  return name === DEFAULT_OUTBOX_TABLE ? 'OutboxMessage' : `OutboxMessage_${name}`;
}
