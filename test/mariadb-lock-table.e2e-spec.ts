import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxWriteError } from '@nest-outbox/outbox';
import { createOutboxLocksTableMigration, outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { lockBucket } from '../libs/outbox/src/sql/dialects/aggregate-lock-buckets.sql';
import { tableDialectFor } from '../libs/outbox/src/sql/outbox-sql.factory';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';
import { privateMariaDbDatabase } from './support/databases';
import { startupFailure } from './support/startup-failure';
import { holdTransaction } from './support/held-transaction';

/**
 * MariaDB's commit-order locks are rows of `<table>_locks`: what happens when that table is missing
 * (a table made before it existed), short of rows, or held longer than innodb_lock_wait_timeout.
 */
describe('The MariaDB lock table', () => {
  describe('on a database made before it existed', () => {
    let database: { url: string; drop(): Promise<void> };
    const options = () => ({ type: 'mariadb' as const, url: database.url, entities: [outboxMessageEntity()], retryAttempts: 0 });

    beforeAll(async () => {
      database = await privateMariaDbDatabase('locks');
      const dataSource = await new DataSource({ ...options(), migrations: [CreateOutboxTable] }).initialize();
      await dataSource.runMigrations();
      await dataSource.query('DROP TABLE outbox_messages_locks');
      await dataSource.destroy();
    });

    afterAll(() => database?.drop());

    it('fails the start naming the missing table and the migration that adds it', async () => {
      const failure = await startupFailure(options(), [OutboxModule.forRoot({ relay: false })]);
      expect(String(failure)).toMatch(/outbox_messages_locks/);
      expect(String(failure)).toMatch(/createOutboxLocksTableMigration\('outbox_messages'\)/);
    });

    it('starts once createOutboxLocksTableMigration has run, which fills 1,024 buckets and does nothing a second time', async () => {
      const AddOutboxLocksTable = createOutboxLocksTableMigration();
      const dataSource = await new DataSource({ ...options(), migrations: [CreateOutboxTable, AddOutboxLocksTable] }).initialize();
      try {
        await dataSource.runMigrations();
        await new AddOutboxLocksTable().up(dataSource.createQueryRunner());
        expect(await dataSource.query('SELECT COUNT(*) AS n, MIN(bucket) AS low, MAX(bucket) AS high FROM outbox_messages_locks')).toEqual([
          { n: '1024', low: 0, high: 1023 },
        ]);
      } finally {
        await dataSource.destroy();
      }
      expect(await startupFailure(options(), [OutboxModule.forRoot({ relay: false })])).toBeUndefined();
    });
  });

  describe('while writing', () => {
    let harness: OutboxHarness;

    beforeAll(async () => {
      harness = await createOutboxHarness('mariadb');
    });

    afterAll(() => harness?.close());

    const note = (aggregateId: string, label: string) => ({ type: 'parcels.parcel-noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic: 'parcels' });

    it('turns a lock wait past innodb_lock_wait_timeout into an OutboxWriteError naming the aggregate, and writes nothing', async () => {
      const id = `p-${randomUUID()}`;
      const first = await holdTransaction<EntityManager>((work) => harness.dataSource.transaction(work), (manager) => harness.publisher.add(manager, note(id, 'first')));
      // The timeout error itself shows the second writer waited: no poll for the wait, which lasts only 1 s.
      const second = harness.dataSource.transaction(async (manager) => {
        await manager.query('SET SESSION innodb_lock_wait_timeout = 1');
        await harness.publisher.add(manager, note(id, 'second'));
      });
      const outcome = second.then(
        () => undefined,
        (error: unknown) => error,
      );
      const error = await outcome;
      first.release();
      await first.done;
      expect(error).toBeInstanceOf(OutboxWriteError);
      expect(String(error)).toMatch(new RegExp(`Timed out waiting for the outbox lock of "parcel ${id}"`));
      expect((await harness.rows()).filter((row) => row.aggregateId === id).map((row) => JSON.parse(row.payload).label)).toEqual(['first']);
    });

    it('reads the buckets by primary key, few or many, so it locks those rows only', async () => {
      const dialect = tableDialectFor('mariadb', 'outbox_messages');
      // 3 keys, and 2,000 keys (nearly every bucket): a full scan would lock all 1,024 rows.
      for (const count of [3, 2_000]) {
        const statement = dialect.lockAggregates(Array.from({ length: count }, (_, index) => `parcel\u001f${index}`))!;
        const [plan] = await harness.dataSource.query(`EXPLAIN ${statement.sql}`, statement.params);
        expect({ count, type: plan.type, key: plan.key }).toEqual({ count, type: 'range', key: 'PRIMARY' });
      }
    });

    it('takes record locks without gaps: the buckets beside a held one stay free', async () => {
      const runner = harness.dataSource.createQueryRunner();
      const neighbour = harness.dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.query('SELECT bucket FROM outbox_messages_locks WHERE bucket IN (500) FOR UPDATE');
        await neighbour.startTransaction();
        // NOWAIT fails at once (1205) if one of these rows, or a gap beside the held one, were locked.
        expect(await neighbour.query('SELECT bucket FROM outbox_messages_locks WHERE bucket IN (499, 501) ORDER BY bucket FOR UPDATE NOWAIT')).toEqual([
          { bucket: 499 },
          { bucket: 501 },
        ]);
        await expect(neighbour.query('SELECT bucket FROM outbox_messages_locks WHERE bucket IN (500) FOR UPDATE NOWAIT')).rejects.toThrow(/Lock wait timeout/);
      } finally {
        await neighbour.rollbackTransaction().catch(() => undefined);
        await runner.rollbackTransaction().catch(() => undefined);
        await neighbour.release();
        await runner.release();
      }
    });

    it('refuses to write when the bucket row is missing, naming the table, and writes nothing', async () => {
      const id = `p-${randomUUID()}`;
      const bucket = lockBucket(`parcel\u001f${id}`);
      await harness.dataSource.query('DELETE FROM outbox_messages_locks WHERE bucket = ?', [bucket]);
      try {
        const attempt = harness.dataSource.transaction((manager) => harness.publisher.add(manager, note(id, 'lost')));
        await expect(attempt).rejects.toThrow(OutboxWriteError);
        await expect(attempt).rejects.toThrow(/"outbox_messages_locks" returned 0 of the 1 bucket rows/);
        expect((await harness.rows()).filter((row) => row.aggregateId === id)).toEqual([]);
      } finally {
        await harness.dataSource.query('INSERT INTO outbox_messages_locks (bucket) VALUES (?)', [bucket]);
      }
    });
  });
});
