import { sql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Client, Pool } from 'pg';
import type { QueryRunner } from 'typeorm';
import { carriedStatementsOn, carryToCommit } from '../libs/outbox/src/adapters/pg/commit-carrier';
import { drizzleTransaction } from '../libs/outbox/src/adapters/drizzle/drizzle-transaction';
import { executeAtCommitOrNow } from '../libs/outbox/src/core/sql-transaction.port';
import { pendingEventsOf } from '../libs/outbox/src/core/aggregate-events';
import { privatePostgresSchema } from './support/databases';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { Parcel } from './support/parcel.fixtures';

/**
 * The outbox's statement goes out with the transaction's COMMIT (one network write, one Sync), so
 * that a save costs the round trips it costs without the outbox. Proven on a real PostgreSQL: a
 * carried statement runs at the COMMIT, not before; its failure fails the COMMIT and commits
 * nothing; a ROLLBACK (of the transaction or of its savepoint) drops it; any other statement sends it first.
 */
describe('Statements carried to the COMMIT, on PostgreSQL', () => {
  let schema: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let client: Client;
  let other: Client;

  beforeAll(async () => {
    schema = await privatePostgresSchema('carried');
    const options = { connectionString: schema.url, options: `-c search_path=${schema.schema}` };
    client = new Client(options);
    other = new Client(options);
    await Promise.all([client.connect(), other.connect()]);
    await client.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL CHECK (body <> $$refused$$))');
  });

  afterAll(async () => {
    await Promise.all([client?.end(), other?.end()]);
    await schema?.drop();
  });

  beforeEach(() => client.query('TRUNCATE notes'));

  // A failed test leaves no transaction open for the next one.
  afterEach(async () => {
    if (client.getTransactionStatus() !== 'I') await client.query('ROLLBACK');
  });

  const note = (id: number, body: string) => ({ text: 'INSERT INTO notes (id, body) VALUES ($1, $2)', values: [id, body] });
  const bodies = async () => (await other.query('SELECT body FROM notes ORDER BY id')).rows.map((row) => row.body);

  it('runs the statement at the COMMIT: it may name a table made after it was written', async () => {
    await client.query('BEGIN');
    expect(carryToCommit(client, { text: 'INSERT INTO later_notes (body) VALUES ($1)', values: ['written before its table'] })).toBe(true);
    await other.query('CREATE TABLE later_notes (body text)');
    try {
      await expect(client.query('COMMIT')).resolves.toMatchObject({ command: 'COMMIT' });
      expect((await other.query('SELECT body FROM later_notes')).rows).toEqual([{ body: 'written before its table' }]);
    } finally {
      await other.query('DROP TABLE later_notes');
    }
    expect(Object.prototype.hasOwnProperty.call(client, 'query')).toBe(false);
  });

  it('fails the COMMIT when a carried statement fails, naming it, and commits nothing of the transaction', async () => {
    await client.query('BEGIN');
    await client.query(note(1, 'sent at once'));
    expect(carryToCommit(client, note(2, 'refused'))).toBe(true);
    await expect(client.query('COMMIT')).rejects.toThrow(/notes_body_check.*outbox statement.*INSERT INTO notes/s);
    // The COMMIT did not run: the transaction is still open, and aborted.
    await expect(client.query('SELECT 1')).rejects.toThrow(/current transaction is aborted/);
    await client.query('ROLLBACK');
    expect(await bodies()).toEqual([]);
    // The client goes on as usual.
    await client.query(note(3, 'after'));
    expect(await bodies()).toEqual(['after']);
  });

  it('drops what is carried at a ROLLBACK, and at a ROLLBACK TO the savepoint it was written in', async () => {
    await client.query('BEGIN');
    carryToCommit(client, note(1, 'rolled back'));
    await client.query('ROLLBACK');
    expect(carriedStatementsOn(client)).toEqual([]);
    await client.query('BEGIN');
    await client.query('SAVEPOINT inner_write');
    carryToCommit(client, note(2, 'in a rolled-back savepoint'));
    await client.query('ROLLBACK TO SAVEPOINT inner_write');
    carryToCommit(client, note(3, 'kept'));
    await client.query('COMMIT');
    expect(await bodies()).toEqual(['kept']);
  });

  it('sends what is carried before any other statement, which then sees it', async () => {
    await client.query('BEGIN');
    carryToCommit(client, note(1, 'first'));
    carryToCommit(client, note(2, 'second'));
    expect((await client.query('SELECT count(*)::int AS n FROM notes')).rows).toEqual([{ n: 2 }]);
    expect(await bodies()).toEqual([]);
    await client.query('COMMIT');
    expect(await bodies()).toEqual(['first', 'second']);
  });

  it('reports a failure of what it sent first on the statement that sent it', async () => {
    await client.query('BEGIN');
    carryToCommit(client, note(1, 'refused'));
    await expect(client.query('SELECT 1')).rejects.toThrow(/notes_body_check.*outbox statement/s);
    await client.query('ROLLBACK');
    expect(await bodies()).toEqual([]);
  });

  it('carries nothing outside a transaction, nor a named statement not yet prepared on the connection', async () => {
    expect(carryToCommit(client, note(1, 'no transaction'))).toBe(false);
    await client.query('BEGIN');
    const named = { ...note(2, 'named'), name: 'carried_note' };
    expect(carryToCommit(client, named)).toBe(false);
    await client.query({ name: 'carried_note', text: named.text, values: [...named.values] });
    expect(carryToCommit(client, { ...note(3, 'bound by name'), name: 'carried_note' })).toBe(true);
    await client.query('COMMIT');
    expect(await bodies()).toEqual(['named', 'bound by name']);
  });
});

describe('The outbox INSERT carried to the COMMIT, through TypeORM', () => {
  let harness: OutboxHarness;

  beforeAll(async () => {
    harness = await createOutboxHarness('postgres', { relay: false, preparedStatements: false });
    await harness.dataSource.query(`ALTER TABLE outbox_messages ADD CONSTRAINT refuses_discards CHECK (event_type <> 'parcels.parcel-discarded')`);
  });

  afterAll(() => harness?.close());

  it('commits the aggregate and its event together in the round trip of the COMMIT', async () => {
    const parcel = Parcel.register('carried', 10);
    await harness.dataSource.transaction((manager) => manager.save(parcel));
    expect((await harness.rows()).filter((row) => row.aggregateId === parcel.id).map((row) => row.eventType)).toEqual(['parcels.parcel-registered']);
    expect(pendingEventsOf(parcel, 'parcel')).toEqual([]);
  });

  it('fails the transaction when the carried INSERT fails: neither the aggregate nor its event commits, and the event stays recorded', async () => {
    const parcel = Parcel.register('refused at commit', 10);
    parcel.discard();
    await expect(harness.dataSource.transaction((manager) => manager.save(parcel))).rejects.toThrow(/refuses_discards.*outbox statement/s);
    expect(await harness.dataSource.query('SELECT id FROM parcels WHERE id = $1', [parcel.id])).toEqual([]);
    expect((await harness.rows()).filter((row) => row.aggregateId === parcel.id)).toEqual([]);
    expect(pendingEventsOf(parcel, 'parcel').map(({ event }) => event.constructor.name)).toEqual(['ParcelRegistered', 'ParcelDiscarded']);
  });
  it('keeps positions in commit order: of two writers of one aggregate, the one that commits first comes first', async () => {
    const parcel = Parcel.register('carried', 10);
    await harness.dataSource.getRepository(Parcel).save(parcel);
    const [early, late] = [harness.dataSource.createQueryRunner(), harness.dataSource.createQueryRunner()];
    const note = (runner: QueryRunner, label: string) =>
      harness.publisher.add(runner.manager, { type: 'parcels.parcel-noted', aggregateType: 'parcel', aggregateId: parcel.id, payload: { label }, topic: 'parcels' });
    try {
      await early.startTransaction();
      await late.startTransaction();
      // Neither write waits (run at once, the first INSERT would hold the aggregate's lock, and the test hang):
      // each holds the lock from its INSERT, sent with its COMMIT, to the end of that COMMIT.
      await note(early, 'written first, committed second');
      await note(late, 'written second, committed first');
      await late.commitTransaction();
      await early.commitTransaction();
    } finally {
      await Promise.all([early.release(), late.release()]);
    }
    const rows = (await harness.rows()).filter((row) => row.aggregateId === parcel.id && row.eventType === 'parcels.parcel-noted');
    expect(rows.map((row) => JSON.parse(row.payload).label)).toEqual(['written second, committed first', 'written first, committed second']);
  });

  it('with prepared statements, carries every save after the first on a connection (which prepares the INSERT)', async () => {
    const prepared = await createOutboxHarness('postgres', { relay: false });
    try {
      const carried: number[] = [];
      for (let save = 0; save < 20; save++) {
        await prepared.dataSource.transaction(async (manager) => {
          await manager.save(Parcel.register(`prepared ${save}`, 10));
          carried.push(carriedStatementsOn((manager.queryRunner as unknown as { databaseConnection: object }).databaseConnection).length);
        });
      }
      // The pool hands the idle connection back: one save prepares the statement, the others bind it with the COMMIT.
      expect(carried.filter((count) => count === 1).length).toBeGreaterThanOrEqual(18);
      expect((await prepared.rows()).length).toBe(20);
    } finally {
      await prepared.close();
    }
  });
});

describe('The outbox statement carried to the COMMIT, through Drizzle on node-postgres', () => {
  let schema: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let db: NodePgDatabase;

  beforeAll(async () => {
    schema = await privatePostgresSchema('carried_drizzle');
    pool = new Pool({ connectionString: schema.url, options: `-c search_path=${schema.schema}`, max: 2 });
    db = drizzle(pool);
    await pool.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL CHECK (body <> $$refused$$))');
  });

  afterAll(async () => {
    await pool?.end();
    await schema?.drop();
  });

  const insert = 'INSERT INTO notes (id, body) VALUES ($1, $2)';
  const bodies = async () => (await pool.query('SELECT body FROM notes ORDER BY id')).rows.map((row) => row.body);
  const clientOf = (tx: unknown) => (tx as { session: { client: object } }).session.client;

  it('holds the statement for the COMMIT, which commits it with the transaction', async () => {
    let held = -1;
    await db.transaction(async (tx) => {
      await executeAtCommitOrNow(drizzleTransaction(tx), insert, [1, 'with the commit']);
      held = carriedStatementsOn(clientOf(tx)).length;
    });
    expect(held).toBe(1);
    expect(await bodies()).toEqual(['with the commit']);
  });

  it('fails the COMMIT when the held statement fails, naming it, and commits nothing of the transaction', async () => {
    const failed = await db
      .transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO notes (id, body) VALUES (2, 'the aggregate')`);
        await executeAtCommitOrNow(drizzleTransaction(tx), insert, [3, 'refused']);
      })
      .then(() => undefined, (error: Error) => error);
    // Drizzle wraps what the driver rejected with ("Failed query: commit"), the statement's own error as its cause.
    expect(failed?.message).toMatch(/Failed query: commit/);
    expect((failed?.cause as Error | undefined)?.message).toMatch(/notes_body_check.*outbox statement/s);
    expect(await bodies()).toEqual(['with the commit']);
  });

  it('runs it when written with writeWithCommit false', async () => {
    let held = -1;
    await db.transaction(async (tx) => {
      await executeAtCommitOrNow(drizzleTransaction(tx, { writeWithCommit: false }), insert, [4, 'when written']);
      held = carriedStatementsOn(clientOf(tx)).length;
    });
    expect(held).toBe(0);
    expect(await bodies()).toEqual(['with the commit', 'when written']);
  });
});
