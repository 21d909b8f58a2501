import { clipErrorText } from '../core/message-limits';
import type { NewOutboxMessage } from '../core/outbox-message';
import { aggregateOf, type StreamOverflow, type TableBacklog, type TableHeld, type TableReadContext } from '../core/stream/stream-overflow.port';
import { parseLsn, type StreamMessage } from '../core/stream/stream-message';
import { aggregateKey } from '../sql/aggregate-key';
import type { SqlConnection } from '../core/sql-connection.port';
import { OutboxTable, type OutboxTableLocation } from '../sql/dialects/outbox-table';
import { tableDialectFor } from '../sql/outbox-sql.factory';
import { StreamOwnedRows } from '../sql/dialects/stream-owned-rows.sql';
import { runUntilVisible, visibleInSnapshot } from './visible-commits';

// Where the stream's reads of the table import it from (tests too).
export { visibleInSnapshot } from './visible-commits';

/**
 * The WAL mode's overflow: messages the stream cannot publish become rows of the table relay, due
 * after the backoff and charged with the attempts the stream made, so that the table relay retries
 * them in order and, past `maxAttempts`, makes them dead, as any row. A row the stream owns
 * (`wal.write: 'row'`) is let go in place; a WAL message is inserted, unless a replay of the same
 * commit after a crash inserted it already.
 */
export class TableOverflow implements StreamOverflow {
  private readonly table: OutboxTable;
  private readonly backlogSql: string;
  private readonly heldSql: string;
  private readonly streamRows: StreamOwnedRows;
  // The last position of a row not the stream's when it connected (see replayWindow).
  private lastMoved: bigint | undefined;

  constructor(
    private readonly connection: SqlConnection,
    location: string | OutboxTableLocation,
    private readonly options: { notifyChannel?: string; deadLetterPolicy: 'hold' | 'skip' },
  ) {
    this.table = OutboxTable.on('postgres', location);
    this.streamRows = new StreamOwnedRows(this.table);
    // A dead row holds its aggregate's later rows under 'hold', so it holds the stream's too.
    const holding = options.deadLetterPolicy === 'hold' ? `('pending', 'dead')` : `('pending')`;
    const t = this.table.quoted();
    // The stream's own rows (wal.write 'row') are what it publishes, in commit order: they hold nothing.
    const notStreamOwned = StreamOwnedRows.notStreamOwned();
    // Per held aggregate: the earliest commit position of its rows' inserting transactions, when
    // the stream decoded them all as insert-only commits ($1 xids, $2 positions); NULL otherwise.
    const placed = (where: string, limit: string) => `SELECT aggregate_type AS "aggregateType", aggregate_id AS "aggregateId",
        CASE WHEN bool_and(k.lsn IS NOT NULL) THEN min(k.lsn)::text END AS "heldFrom"
      FROM ${t} LEFT JOIN unnest($1::bigint[], $2::numeric[]) AS k(xid, lsn) ON k.xid = ${t}.xmin::text::bigint
      WHERE status IN ${holding} AND ${notStreamOwned}${where} GROUP BY aggregate_type, aggregate_id${limit}`;
    // One row: whether the statement's snapshot sees the decoded commits ($3), the held aggregates
    // (as JSON text), and for the backlog whether any aggregate is held; all in that one snapshot.
    const answer = (rows: string, extra: string) => `SELECT ${visibleInSnapshot('$3')} AS visible,
      (SELECT coalesce(json_agg(h), '[]')::text FROM (${rows}) AS h) AS held${extra}`;
    this.backlogSql = answer(
      placed(` AND (aggregate_type, aggregate_id) IN (SELECT t, i FROM unnest($4::text[], $5::text[]) AS a(t, i))`, ''),
      `, EXISTS (SELECT 1 FROM ${t} WHERE status IN ${holding} AND ${notStreamOwned}) AS "any"`,
    );
    // Over the partial index of unpublished rows by aggregate: as many rows as held aggregates.
    this.heldSql = answer(placed('', ' LIMIT $4'), '');
  }

  async held(limit: number, context?: TableReadContext): Promise<TableHeld> {
    const { records } = await this.connection.run({ sql: this.heldSql, params: [...contextParams(context), limit + 1] });
    const read = readAnswer(records[0]);
    const rows = read.rows.slice(0, limit);
    return { aggregates: new Set(rows.map(aggregateOf)), complete: read.rows.length <= limit, heldFrom: heldFrom(rows), visible: read.visible };
  }

  async backlogged(aggregates: ReadonlyArray<Pick<StreamMessage, 'aggregateType' | 'aggregateId'>>, context?: TableReadContext): Promise<TableBacklog> {
    const distinct = [...new Map(aggregates.map((a) => [aggregateOf(a), a])).values()];
    const params = [...contextParams(context), distinct.map((a) => a.aggregateType), distinct.map((a) => a.aggregateId)];
    const { records } = await this.connection.run({ sql: this.backlogSql, params });
    const read = readAnswer(records[0]);
    return { aggregates: new Set(read.rows.map(aggregateOf)), any: truthy(records[0]?.any), heldFrom: heldFrom(read.rows), visible: read.visible };
  }

  async pausedDestinations(): Promise<string[]> {
    const { records } = await this.connection.run({ sql: `SELECT destination FROM ${this.table.paused.quoted()}`, params: [] });
    return records.map((row) => String(row.destination));
  }

  async divert(messages: ReadonlyArray<{ message: StreamMessage; attempts: number; error: string }>, retryInMs: number): Promise<void> {
    const owned = messages.filter(({ message }) => message.row !== undefined);
    // A row the stream owns is let go where it stands, with its position (none if it was published and deleted before a replay).
    if (owned.length > 0) {
      const rows = owned.map(({ message, attempts, error }) => ({ ...message.row!, attempts, error: clipErrorText(error) }));
      await runUntilVisible(this.connection, this.streamRows.release(rows, retryInMs, visibleInSnapshot), rows.map((row) => row.xid));
    }
    if (owned.length < messages.length) await this.insertRows(messages.filter(({ message }) => message.row === undefined), retryInMs);
  }

  async replayWindow(): Promise<bigint | undefined> {
    // The last row not the stream's: a row the stream let go keeps its position, and a moved WAL
    // message gets a new one; none, and nothing of the replay can have been handed on. Read with
    // the WAL's end in one snapshot: a move committed after it is of a message this stream reads.
    const { records } = await this.connection.run({
      sql: `SELECT pg_current_wal_lsn()::text AS lsn, (SELECT max(position)::text FROM ${this.table.quoted()} WHERE ${StreamOwnedRows.notStreamOwned()}) AS moved`,
      params: [],
    });
    const moved = records[0]?.moved;
    this.lastMoved = typeof moved === 'string' ? BigInt(moved) : undefined;
    return this.lastMoved === undefined ? undefined : parseLsn(String(records[0].lsn));
  }

  async handedOn(messages: ReadonlyArray<StreamMessage>): Promise<Set<string>> {
    const handed = new Set<string>();
    // A row of the stream's written after the last row it could have let go is still its own.
    const owned = messages.filter((message) => message.row !== undefined && this.lastMoved !== undefined && BigInt(message.row.position) <= this.lastMoved);
    if (owned.length > 0) {
      // A replayed row the stream no longer owns was let go to the table relay, or published and deleted.
      const rows = owned.map((message) => message.row!);
      const answer = await runUntilVisible(this.connection, this.streamRows.stillOwned(rows, visibleInSnapshot), rows.map((row) => row.xid));
      const still = new Set(JSON.parse(String(answer.owned)) as string[]);
      for (const message of owned) if (!still.has(message.row!.position)) handed.add(message.id);
    }
    const walMessages = messages.filter((message) => message.row === undefined);
    if (walMessages.length > 0) {
      // A replayed WAL message that has a row of its id was moved there by an earlier stream: the table relay's.
      const { records } = await this.connection.run({ sql: `SELECT id::text AS id FROM ${this.table.quoted()} WHERE id = ANY($1::uuid[])`, params: [walMessages.map((message) => message.id)] });
      for (const record of records) handed.add(String(record.id));
    }
    return handed;
  }

  /** WAL messages (`wal.write: 'message'`) become rows, unless a replay of the same commit wrote them already. */
  private async insertRows(messages: ReadonlyArray<{ message: StreamMessage; attempts: number; error: string }>, retryInMs: number): Promise<void> {
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
      // Also makes this commit one that updated rows: the stream then never places these rows at its
      // position (they carry messages committed before it), see TableWrites.
      await run({
        sql: `UPDATE ${t} AS m SET attempts = f.attempts, last_error = f.error,
           error_history = CASE WHEN f.attempts > 0 THEN jsonb_build_array(jsonb_build_object('at', now(), 'error', f.error))::text END
         FROM unnest($1::uuid[], $2::int[], $3::text[]) AS f(id, attempts, error) WHERE m.id = f.id`,
        params: [missing.map(({ message }) => message.id), missing.map(({ attempts }) => attempts), missing.map(({ error }) => clipErrorText(error))],
      });
    });
  }
}

function contextParams(context: TableReadContext | undefined): unknown[] {
  const inserts = [...(context?.inserts ?? [])];
  return [inserts.map(([xid]) => xid), inserts.map(([, lsn]) => lsn.toString()), [...(context?.mustSee ?? [])]];
}

type HeldRow = { aggregateType: string; aggregateId: string; heldFrom: string | null };

function readAnswer(record: Record<string, unknown> | undefined): { visible: boolean; rows: HeldRow[] } {
  const held = record?.held;
  return { visible: truthy(record?.visible), rows: typeof held === 'string' ? (JSON.parse(held) as HeldRow[]) : [] };
}

function heldFrom(rows: HeldRow[]): Map<string, bigint> {
  return new Map(rows.filter((row) => row.heldFrom !== null).map((row) => [aggregateOf(row), BigInt(row.heldFrom!)]));
}

// Drivers hand booleans over as booleans, some as 't'/'f' or 1/0.
function truthy(value: unknown): boolean {
  return value === true || value === 't' || value === 'true' || value === 1 || value === '1';
}

function rowOf(message: StreamMessage): NewOutboxMessage {
  const { commit: _commit, index: _index, occurredAt, ...fields } = message;
  return { ...fields, occurredAt: new Date(occurredAt) };
}
