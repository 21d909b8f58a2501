import { clipErrorText } from '../../core/message-limits';
import type { NewOutboxMessage } from '../../core/outbox-message';
import { aggregateOf, type StreamOverflow, type TableBacklog } from '../../core/stream/stream-overflow.port';
import type { StreamMessage } from '../../core/stream/stream-message';
import { aggregateKey } from '../aggregate-key';
import type { SqlConnection } from '../sql-connection.port';
import { OutboxTable, type OutboxTableLocation } from '../dialects/outbox-table';
import { tableDialectFor } from '../outbox-sql.factory';

/**
 * The WAL mode's overflow: messages the stream cannot publish become rows of the outbox table, due
 * after the backoff and charged with the attempts the stream made, so that the table relay retries
 * them in order and, past `maxAttempts`, makes them dead, as any row. Rows already in the table
 * (the same commit replayed after a crash) are not written twice.
 */
export class TableOverflow implements StreamOverflow {
  private readonly table: OutboxTable;
  private readonly backlogSql: string;
  private readonly heldSql: string;

  constructor(
    private readonly connection: SqlConnection,
    location: string | OutboxTableLocation,
    private readonly options: { notifyChannel?: string; deadLetterPolicy: 'hold' | 'skip' },
  ) {
    this.table = OutboxTable.on('postgres', location);
    // A dead row holds its aggregate's later rows under 'hold', so it holds the stream's too.
    const holding = options.deadLetterPolicy === 'hold' ? `('pending', 'dead')` : `('pending')`;
    // One row per backlogged aggregate asked for, or one row with NULLs when another one has a backlog.
    this.backlogSql = `SELECT DISTINCT aggregate_type AS "aggregateType", aggregate_id AS "aggregateId" FROM ${this.table.quoted()}
      WHERE status IN ${holding} AND (aggregate_type, aggregate_id) IN (SELECT t, i FROM unnest($1::text[], $2::text[]) AS a(t, i))
      UNION ALL SELECT NULL, NULL WHERE EXISTS (SELECT 1 FROM ${this.table.quoted()} WHERE status IN ${holding})`;
    // Over the partial index of unpublished rows by aggregate: as many rows as held aggregates.
    this.heldSql = `SELECT DISTINCT aggregate_type AS "aggregateType", aggregate_id AS "aggregateId" FROM ${this.table.quoted()}
      WHERE status IN ${holding} LIMIT $1`;
  }

  async held(limit: number): Promise<{ aggregates: Set<string>; complete: boolean }> {
    const { records } = await this.connection.run({ sql: this.heldSql, params: [limit + 1] });
    const rows = (records as Array<{ aggregateType: string; aggregateId: string }>).slice(0, limit);
    return { aggregates: new Set(rows.map(aggregateOf)), complete: records.length <= limit };
  }

  async backlogged(aggregates: ReadonlyArray<Pick<StreamMessage, 'aggregateType' | 'aggregateId'>>): Promise<TableBacklog> {
    const distinct = [...new Map(aggregates.map((a) => [aggregateOf(a), a])).values()];
    const { records } = await this.connection.run({ sql: this.backlogSql, params: [distinct.map((a) => a.aggregateType), distinct.map((a) => a.aggregateId)] });
    const rows = records as Array<{ aggregateType: string | null; aggregateId: string | null }>;
    const held = rows.filter((row): row is { aggregateType: string; aggregateId: string } => row.aggregateType !== null);
    return { aggregates: new Set(held.map(aggregateOf)), any: rows.length > 0 };
  }

  async divert(messages: ReadonlyArray<{ message: StreamMessage; attempts: number; error: string }>, retryInMs: number): Promise<void> {
    const t = this.table.quoted();
    const dialect = tableDialectFor('postgres', this.table, { notifyChannel: this.options.notifyChannel });
    await this.connection.transaction(async (run) => {
      const ids = messages.map(({ message }) => message.id);
      const present = new Set((await run({ sql: `SELECT id::text AS id FROM ${t} WHERE id = ANY($1::uuid[])`, params: [ids] })).records.map((row) => String(row.id)));
      const missing = messages.filter(({ message }) => !present.has(message.id));
      if (missing.length === 0) return;
      const rows: NewOutboxMessage[] = missing.map(({ message }) => ({ ...rowOf(message), delayMs: retryInMs > 0 ? retryInMs : undefined }));
      const keys = missing.map(({ message }) => aggregateKey(message.aggregateType, message.aggregateId));
      await run(dialect.insert(rows, { lockKeys: keys }));
      await run({
        sql: `UPDATE ${t} AS m SET attempts = f.attempts, last_error = f.error,
           error_history = CASE WHEN f.attempts > 0 THEN jsonb_build_array(jsonb_build_object('at', now(), 'error', f.error))::text END
         FROM unnest($1::uuid[], $2::int[], $3::text[]) AS f(id, attempts, error) WHERE m.id = f.id`,
        params: [missing.map(({ message }) => message.id), missing.map(({ attempts }) => attempts), missing.map(({ error }) => clipErrorText(error))],
      });
    });
  }
}

function rowOf(message: StreamMessage): NewOutboxMessage {
  const { commit: _commit, index: _index, occurredAt, ...fields } = message;
  return { ...fields, occurredAt: new Date(occurredAt) };
}
