import type { Client } from 'pg';
import type { ClaimedMessage } from '../../../libs/outbox/src/core/outbox-message';
import { toOutgoingMessage } from './outbox';

/**
 * The backlog every contender drains: `count` events over `count / eventsPerAggregate`
 * aggregates, interleaved (event i belongs to aggregate i mod A, and is that aggregate's event
 * number floor(i / A)), so consecutive rows are different aggregates and each aggregate's later
 * events come after all first events. Payloads carry `seq` so a consumer can check the order.
 * The SQL builds the same bytes for every table: `payloadSql` is the JSON text of event g.
 */
export interface Backlog {
  count: number;
  eventsPerAggregate: number;
}

export const aggregatesOf = (backlog: Backlog) => Math.max(1, Math.floor(backlog.count / backlog.eventsPerAggregate));

const aggregateIdSql = (aggregates: number) => `md5(((g - 1) % ${aggregates})::text)::uuid::text`;
const payloadSql = (aggregates: number) =>
  `json_build_object('parcelId', ${aggregateIdSql(aggregates)}, 'seq', (g - 1) / ${aggregates}, 'label', 'parcel-' || lpad(g::text, 8, '0'), ` +
  `'weightGrams', 100 + g % 5000, 'note', 'benchmark event for the outbox relay drain')::text`;

const CHUNK = 100_000;

/** Inserts the backlog as pending rows of the library's table `schema.table` (created by its migration). */
export async function seedOutboxTable(client: Client, schema: string, table: string, topic: string, backlog: Backlog): Promise<void> {
  const aggregates = aggregatesOf(backlog);
  for (let from = 1; from <= backlog.count; from += CHUNK) {
    const to = Math.min(backlog.count, from + CHUNK - 1);
    await client.query(
      `INSERT INTO "${schema}"."${table}"
         (id, event_type, event_version, aggregate_type, aggregate_id, transport, destination, occurred_at, headers, payload)
       SELECT gen_random_uuid(), 'bench.parcel-registered', 1, 'parcel', ${aggregateIdSql(aggregates)}, 'default', $1,
              now(), '{}', ${payloadSql(aggregates)}
       FROM generate_series(${from}, ${to}) AS g ORDER BY g`,
      [topic],
    );
  }
  await client.query(`ANALYZE "${schema}"."${table}"`);
}

/** The same backlog in pg-transactional-outbox's table; `segment` = aggregate id gives it the same per-aggregate order rule. */
export async function seedPgTransactionalOutbox(client: Client, schema: string, table: string, backlog: Backlog): Promise<void> {
  const aggregates = aggregatesOf(backlog);
  for (let from = 1; from <= backlog.count; from += CHUNK) {
    const to = Math.min(backlog.count, from + CHUNK - 1);
    await client.query(
      `INSERT INTO "${schema}"."${table}" (id, aggregate_type, aggregate_id, message_type, segment, payload, created_at)
       SELECT gen_random_uuid(), 'parcel', ${aggregateIdSql(aggregates)}, 'bench.parcel-registered', ${aggregateIdSql(aggregates)},
              (${payloadSql(aggregates)})::jsonb, now() + g * interval '1 microsecond'
       FROM generate_series(${from}, ${to}) AS g ORDER BY g`,
    );
  }
  await client.query(`ANALYZE "${schema}"."${table}"`);
}

export interface KafkaRecord {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** What a row of the library's table looks like on Kafka: exactly the record the library's Kafka transport sends. */
export function recordOfRow(row: Record<string, unknown>): KafkaRecord {
  const claimed: ClaimedMessage = {
    position: String(row.position),
    id: String(row.id),
    type: String(row.event_type),
    version: Number(row.event_version),
    aggregateType: String(row.aggregate_type),
    aggregateId: String(row.aggregate_id),
    transport: String(row.transport),
    destination: String(row.destination),
    occurredAt: row.occurred_at instanceof Date ? row.occurred_at.toISOString() : String(row.occurred_at),
    correlationId: (row.correlation_id as string | null) ?? undefined,
    causationId: (row.causation_id as string | null) ?? undefined,
    tenantId: (row.tenant_id as string | null) ?? undefined,
    headers: JSON.parse(String(row.headers)),
    payloadJson: String(row.payload),
    attempt: Number(row.attempts),
  };
  const outgoing = toOutgoingMessage(claimed);
  return { key: outgoing.key, value: JSON.stringify(outgoing.envelope), headers: outgoing.headers };
}

/**
 * Inserts one pending row per entry of `aggregateIds`, in that order, into the library's table;
 * each row's payload `seq` is its number within its aggregate. No ANALYZE: callers decide.
 */
export async function seedKeyedRows(client: Client, schema: string, table: string, topic: string, aggregateIds: string[]): Promise<void> {
  await client.query(
    `INSERT INTO "${schema}"."${table}"
       (id, event_type, event_version, aggregate_type, aggregate_id, transport, destination, occurred_at, headers, payload)
     SELECT gen_random_uuid(), 'bench.account-debited', 1, 'account', k.aggregate_id, 'default', $1, now(), '{}',
            json_build_object('accountId', k.aggregate_id, 'seq', row_number() OVER (PARTITION BY k.aggregate_id ORDER BY k.n) - 1,
                              'note', 'benchmark event for the outbox relay drain')::text
     FROM unnest($2::text[]) WITH ORDINALITY AS k(aggregate_id, n) ORDER BY k.n`,
    [topic, aggregateIds],
  );
}
