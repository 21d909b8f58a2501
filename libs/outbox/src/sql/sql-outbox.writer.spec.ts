import { OutboxConfigurationError, OutboxWriteError } from '../core/outbox.errors';
import { OutboxMessageFactory } from '../core/outbox-message.factory';
import type { OutboxMessageInput } from '../core/outbox-message-input';
import { splitPlaceholders, toQuestionMarks } from './positional-params';
import { lockBucket } from './dialects/aggregate-lock-buckets.sql';
import { SqlOutboxWriter } from './sql-outbox.writer';
import { STREAM_OWNER } from './dialects/stream-owned-rows.sql';
import type { SqlDialectName, SqlTransaction } from '../core/sql-transaction.port';
import { ClaimCheck } from '../core/claim-check/claim-check';
import { DatabasePayloadStore } from './claim-check/database-payload.store';

/** Records the statements instead of running them: the SQL itself is proven against real databases in test/data-layers. */
function recordingTransaction(
  dialect: SqlDialectName,
  answer: (sql: string, params: readonly unknown[]) => Record<string, unknown>[] = () => [],
): SqlTransaction & { statements: { sql: string; params: readonly unknown[] }[] } {
  const statements: { sql: string; params: readonly unknown[] }[] = [];
  const run = async (sql: string, params: readonly unknown[]) => {
    statements.push({ sql, params });
    return answer(sql, params);
  };
  return { dialect, layer: 'test', statements, query: run, execute: async (sql, params) => void (await run(sql, params)) };
}

const message = (aggregateId: string, extra: Partial<OutboxMessageInput> = {}): OutboxMessageInput => ({
  type: 'billing.invoice-issued',
  aggregateType: 'invoice',
  aggregateId,
  payload: { aggregateId },
  ...extra,
});

describe('SqlOutboxWriter', () => {
  const writer = (notifyChannel?: string) => new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { notifyChannel });

  it('inserts on PostgreSQL with the aggregates’ advisory locks riding on the first INSERT, sorted and once each', async () => {
    const tx = recordingTransaction('postgres');
    const ids = await writer().add(tx, [message('b'), message('a'), message('b')]);
    expect(ids).toHaveLength(3);
    expect(tx.statements).toHaveLength(1);
    expect(tx.statements[0].sql).toContain('pg_advisory_xact_lock');
    expect(tx.statements[0].params.at(-1)).toEqual(['invoice\u001fa', 'invoice\u001fb']);
  });

  it('carries the notification of the configured channel on PostgreSQL', async () => {
    const tx = recordingTransaction('postgres');
    await writer('outbox_outbox_messages').add(tx, message('a'));
    expect(tx.statements[0].sql).toContain('pg_notify');
    expect(tx.statements[0].params).toContain('outbox_outbox_messages');
  });

  it('carries the notification only while the transaction says it still needs one', async () => {
    const sent: number[] = [];
    let needed = true;
    const tx = {
      ...recordingTransaction('postgres'),
      notifications: { needed: () => needed, sent: () => ((needed = false), sent.push(tx.statements.length)) },
    };
    const w = writer('outbox_outbox_messages');
    await w.add(tx, Array.from({ length: 501 }, (_, index) => message(`a-${index}`)));
    await w.add(tx, message('b'));
    expect(tx.statements.map((statement) => statement.sql.includes('pg_notify'))).toEqual([true, false, false]);
    expect(sent).toEqual([1]);
  });

  it("in the WAL mode with write 'message', emits one logical message per write and inserts only the delayed messages, with their locks", async () => {
    const tx = recordingTransaction('postgres');
    const wal = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { wal: { prefix: 'outbox_slot', write: 'message' } });
    await wal.add(tx, [message('a'), message('b', { delayMs: 60_000 }), message('c')]);
    expect(tx.statements).toHaveLength(2);
    expect(tx.statements[0].sql).toMatch(/^WITH .*pg_advisory_xact_lock.*INSERT INTO "outbox_messages"/s);
    expect(tx.statements[1].sql).toBe('SELECT pg_logical_emit_message(true, $1, $2)');
    expect(tx.statements[1].params[0]).toBe('outbox_slot');
  });

  it("in the WAL mode with write 'row', inserts rows leased to the stream, locked and without a notification, and the delayed ones as table rows", async () => {
    const tx = recordingTransaction('postgres');
    const options = { notifyChannel: 'outbox_wake', wal: { prefix: 'outbox_slot', write: 'row' as const } };
    const wal = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', options);
    await wal.add(tx, [message('a'), message('b', { delayMs: 60_000 }), message('c')]);
    expect(tx.statements).toHaveLength(2);
    expect(tx.statements[0].sql).not.toContain(STREAM_OWNER);
    expect(tx.statements[1].sql).toMatch(/^WITH .*pg_advisory_xact_lock.*INSERT INTO "outbox_messages" \(.*lease_owner, lease_expires_at\)/s);
    expect(tx.statements[1].sql).toContain(`'${STREAM_OWNER}', 'infinity'`);
    expect(tx.statements[1].sql).not.toContain('pg_notify');
  });

  it("in the WAL mode with write 'message', writes rows the stream owns while no usable slot decodes messages", async () => {
    let decoded = false;
    const tx = recordingTransaction('postgres');
    const wal = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { wal: { prefix: 'outbox_slot', write: 'message', messagesDecoded: () => decoded } });
    await wal.add(tx, message('a'));
    decoded = true;
    await wal.add(tx, message('b'));
    expect(tx.statements.map((statement) => (statement.sql.includes(STREAM_OWNER) ? 'row' : statement.sql.includes('pg_logical_emit_message') ? 'message' : statement.sql))).toEqual(['row', 'message']);
  });

  it('tells about each delay once its rows were inserted, not when the messages were built', async () => {
    const told: Array<{ delayMs: number; statements: number }> = [];
    const tx = recordingTransaction('sqlite');
    const delayed = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { onDelayed: (delayMs) => told.push({ delayMs, statements: tx.statements.length }) });
    await delayed.add(tx, [message('a'), message('b', { delayMs: 1_500 }), message('c', { delayMs: 1_500 })]);
    expect(told).toEqual([{ delayMs: 1_500, statements: 1 }]);
  });

  it('hands the statements to the COMMIT where the transaction can carry them, and runs them where it cannot', async () => {
    const carried: string[] = [];
    let canCarry = true;
    const tx = { ...recordingTransaction('postgres'), executeWithCommit: (sql: string) => canCarry && carried.push(sql) > 0 };
    const wal = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { wal: { prefix: 'outbox_slot', write: 'message' } });
    await wal.add(tx, [message('a'), message('b', { delayMs: 60_000 })]);
    // Without onDelayed nothing waits for the delayed row's INSERT to have run: both go with the COMMIT.
    expect(carried.map((sql) => sql.slice(0, 30))).toEqual([expect.stringMatching(/^WITH /), 'SELECT pg_logical_emit_message']);
    expect(tx.statements).toEqual([]);
    canCarry = false;
    await wal.add(tx, message('c'));
    expect(tx.statements.map((statement) => statement.sql)).toEqual(['SELECT pg_logical_emit_message(true, $1, $2)']);
  });

  it('runs a delayed row’s INSERT at once when its wake-up counts from it', async () => {
    const carried: string[] = [];
    const tx = { ...recordingTransaction('postgres'), executeWithCommit: (sql: string) => carried.push(sql) > 0 };
    const delayed = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { onDelayed: () => undefined });
    await delayed.add(tx, message('a', { delayMs: 1_500 }));
    await delayed.add(tx, message('b'));
    expect(tx.statements).toHaveLength(1);
    expect(carried).toHaveLength(1);
  });

  it('writes rows on SQLite and MariaDB in the WAL mode: the stream is PostgreSQL’s', async () => {
    const tx = recordingTransaction('sqlite');
    const wal = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing' }), 'outbox_messages', { wal: { prefix: 'outbox_slot', write: 'row' } });
    await wal.add(tx, message('a'));
    expect(tx.statements.map((statement) => statement.sql)).toEqual([expect.stringMatching(/^INSERT INTO "outbox_messages"/)]);
  });

  it('splits a large add into INSERTs of 500 rows, the locks in the first only', async () => {
    const tx = recordingTransaction('postgres');
    await writer().add(
      tx,
      Array.from({ length: 1001 }, (_, index) => message(`a-${index}`)),
    );
    expect(tx.statements).toHaveLength(3);
    expect(tx.statements.map((statement) => statement.sql.includes('pg_advisory_xact_lock'))).toEqual([true, false, false]);
  });

  it('takes no lock on SQLite, whose writers are serialized by the database', async () => {
    const tx = recordingTransaction('sqlite');
    await writer().add(tx, message('a'));
    expect(tx.statements).toHaveLength(1);
    expect(tx.statements[0].sql).toMatch(/^INSERT INTO "outbox_messages"/);
  });

  it('locks the buckets of the aggregates on MariaDB before inserting, sorted and once each', async () => {
    const tx = recordingTransaction('mariadb', (sql, params) => (sql.includes('FOR UPDATE') ? params.map((bucket) => ({ bucket })) : []));
    await writer().add(tx, [message('b'), message('a'), message('b')]);
    expect(tx.statements).toHaveLength(2);
    expect(tx.statements[0].sql).toMatch(/^SELECT bucket FROM `outbox_messages_locks` FORCE INDEX \(PRIMARY\) WHERE bucket IN \(\?, \?\) ORDER BY bucket FOR UPDATE$/);
    expect(tx.statements[0].params).toEqual([lockBucket('invoice\u001fa'), lockBucket('invoice\u001fb')].sort((x, y) => x - y));
    expect(tx.statements[1].sql).toMatch(/^INSERT INTO `outbox_messages`/);
  });

  it('writes nothing on MariaDB when the lock table lacks a bucket row, naming the table and the migration', async () => {
    const tx = recordingTransaction('mariadb');
    const attempt = writer().add(tx, message('a'));
    await expect(attempt).rejects.toThrow(OutboxWriteError);
    await expect(attempt).rejects.toThrow(/"outbox_messages_locks" returned 0 of the 1 bucket rows.*createOutboxLocksTableMigration/s);
    expect(tx.statements.map((statement) => statement.sql)).toEqual([expect.stringMatching(/FOR UPDATE$/)]);
  });

  it('turns a lock wait timeout (1205) into the error that names the aggregate', async () => {
    const timeout = Object.assign(new Error('Lock wait timeout exceeded; try restarting transaction'), { errno: 1205 });
    const tx = recordingTransaction('mariadb', () => {
      throw new Error('the layer wraps it', { cause: timeout });
    });
    await expect(writer().add(tx, message('a'))).rejects.toThrow(/Timed out waiting for the outbox lock of "invoice a"/);
  });

  it('writes nothing when one message of the batch cannot be built', async () => {
    const tx = recordingTransaction('postgres');
    await expect(writer().add(tx, [message('a'), message('b', { payload: { amount: 10n } })])).rejects.toThrow(OutboxWriteError);
    expect(tx.statements).toEqual([]);
  });

  it('runs the writes through one transaction in call order, even when not awaited one by one', async () => {
    const tx = recordingTransaction('postgres');
    const w = writer();
    await Promise.all([w.add(tx, message('first')), w.add(tx, message('second')), w.add(tx, message('third'))]);
    expect(tx.statements.map((statement) => statement.params[4])).toEqual(['first', 'second', 'third']);
  });
});

describe('PostgreSQL placeholders for layers that number them again', () => {
  it('splits text and values in the order the placeholders appear, a value used twice given twice', () => {
    expect(toQuestionMarks('WITH l AS (SELECT unnest($3::text[])) INSERT INTO t VALUES ($1, $2, $1)', ['a', 'b', ['k']])).toEqual({
      sql: 'WITH l AS (SELECT unnest(?::text[])) INSERT INTO t VALUES (?, ?, ?)',
      params: [['k'], 'a', 'b', 'a'],
    });
  });

  it('leaves a $ that starts no placeholder (a JSON path) as text', () => {
    expect(splitPlaceholders(`SELECT jsonb_path_query_array(x, '$[last]') WHERE id = $1`, [7])).toEqual([
      { text: `SELECT jsonb_path_query_array(x, '$[last]') WHERE id = ` },
      { value: 7 },
      { text: '' },
    ]);
  });

  it('fails on a placeholder without a value', () => {
    expect(() => splitPlaceholders('SELECT $2', ['only one'])).toThrow(/\$2 has no parameter/);
  });
});

describe('SqlOutboxWriter with the claim check', () => {
  const store = new DatabasePayloadStore('outbox_messages');
  const claims = new ClaimCheck({ store: 'database', thresholdBytes: 64, maxBytes: 10_000 }, { store: store.name, location: store.location });
  const large = message('a', { payload: { text: 'x'.repeat(500) } });

  it("stores the payload before the row, in the caller's transaction, and writes the reference into the row", async () => {
    const tx = recordingTransaction('postgres');
    const [id] = await new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing', claims }), 'outbox_messages', { payloadStore: store }).add(tx, large);
    expect(tx.statements).toHaveLength(2);
    expect(tx.statements[0].sql).toMatch(/^INSERT INTO "outbox_messages_payloads"/);
    expect(tx.statements[0].params).toEqual([id, 511, expect.stringMatching(/^[0-9a-f]{64}$/), 'database', JSON.stringify({ text: 'x'.repeat(500) })]);
    expect(tx.statements[1].sql).toContain('INSERT INTO "outbox_messages"');
    expect(JSON.stringify(tx.statements[1].params)).toContain('outboxClaimCheck');
    expect(JSON.stringify(tx.statements[1].params)).not.toContain('x'.repeat(500));
  });

  it('refuses to write a claimed payload without a store, before any statement', async () => {
    const tx = recordingTransaction('postgres');
    const add = new SqlOutboxWriter(new OutboxMessageFactory({ defaultTopic: 'billing', claims }), 'outbox_messages').add(tx, large);
    await expect(add).rejects.toThrow(OutboxConfigurationError);
    await expect(add).rejects.toThrow(/no payload store to put it in; nothing was written/);
    expect(tx.statements).toEqual([]);
  });
});
