import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateOutboxTable, OutboxModule } from '@nest-outbox/outbox';
import { describeOutboxStoreContract } from '@nest-outbox/outbox/testing';
import { OutboxCleaner, type OutboxPartitioning } from '@nest-outbox/outbox/core';
import { createOutboxTableMigration, createSqlOutboxMaintenanceStore, createSqlOutboxPartitionStore } from '@nest-outbox/outbox/typeorm';
import { createSqlOutboxConsoleStore } from '../libs/outbox/src/typeorm/outbox-sql.factory';
import { createOutboxHarness, isolatedDatabase, type OutboxHarness } from './support/outbox-harness';
import { RecordingTransport } from './support/recording.transport';
import { sqlStoreSubject } from './support/sql-store.subject';
import { describeDeadLettersAndCleanup } from './dead-letters.contract';
import { describeOutboxStats } from './outbox-stats.contract';
import { waitFor } from './support/wait-for';

const DAY: OutboxPartitioning = { interval: 'day', ahead: 2 };
const DAY_MS = 86_400_000;
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

// The store's promises (claims, the ordering rule, retries, fencing), dead letters (list, requeue and
// discard by id) and stats hold on a partitioned table too.
describeOutboxStoreContract(sqlStoreSubject('postgres', 'hold', 'writer', { interval: 'hour' }));
describeDeadLettersAndCleanup('postgres', DAY);
describeOutboxStats('postgres', 'table', DAY);

describe('a partitioned outbox table on postgres', () => {
  let harness: OutboxHarness;

  beforeEach(async () => {
    harness = await createOutboxHarness('postgres', { relay: false, partitioning: DAY });
  });

  afterEach(async () => {
    await harness?.close();
  });

  const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => harness.dataSource.query(sql, params) as Promise<T[]>;
  const partitionsOf = async () =>
    (await query<{ name: string; bound: string }>(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'outbox_messages'::regclass ORDER BY c.relname`,
    )).map((row) => row.name);
  const dayName = (offsetDays: number) => `outbox_messages_p${new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
  /** A row as the writer makes it, but with its times set, where a test needs it in the past or the future. */
  const insertAt = async (createdAt: Date, status: 'pending' | 'published' | 'dead', aggregateId = 'A-1', publishedAt?: Date) => {
    const [row] = await query<{ id: string; partition: string }>(
      `INSERT INTO outbox_messages (id, event_type, event_version, aggregate_type, aggregate_id, destination, occurred_at, payload, status, created_at, published_at, dead_at)
       VALUES (gen_random_uuid(), 'order.placed', 1, 'order', $1, 'orders', $2::timestamptz, '{}', $3::varchar, $2::timestamptz, $4::timestamptz, CASE WHEN $3::varchar = 'dead' THEN $2::timestamptz END)
       RETURNING id::text AS id, tableoid::regclass::text AS partition`,
      [aggregateId, createdAt, status, status === 'published' ? (publishedAt ?? createdAt) : null],
    );
    return row;
  };

  it('is made partitioned by the migration: the DEFAULT partition, today and the partitions ahead', async () => {
    const [{ kind }] = await query<{ kind: string }>(`SELECT relkind::text AS kind FROM pg_class WHERE oid = 'outbox_messages'::regclass`);
    expect(kind).toBe('p');
    expect(await partitionsOf()).toEqual([dayName(0), dayName(1), dayName(2), 'outbox_messages_default'].sort());
  });

  it('puts a written row in the partition of its day, and a row past the partitions made ahead in DEFAULT', async () => {
    await harness.add([{ type: 'order.placed', aggregateType: 'order', aggregateId: 'A-1', payload: {}, topic: 'orders' }]);
    const [written] = await query<{ partition: string }>(`SELECT tableoid::regclass::text AS partition FROM outbox_messages`);
    expect(written.partition).toBe(dayName(0));
    expect((await insertAt(new Date(Date.now() + 30 * DAY_MS), 'pending', 'A-2')).partition).toBe('outbox_messages_default');
  });

  it('relays rows in position order across partitions, DEFAULT included', async () => {
    // The first row lands in DEFAULT (a time no partition covers), the later ones in today's partition.
    await insertAt(new Date(Date.now() + 30 * DAY_MS), 'pending', 'A-1');
    for (let n = 0; n < 5; n++) await harness.add([{ type: 'order.placed', aggregateType: 'order', aggregateId: 'A-1', payload: { n }, topic: 'orders' }]);
    const transport = new RecordingTransport();
    const relay = harness.relay('relay', transport, { batchSize: 2 });
    await waitFor('six events published', async () => {
      await relay.trigger();
      return transport.delivered.length === 6;
    });
    expect(transport.delivered.map((m) => (m.envelope.payload as { n?: number }).n ?? -1)).toEqual([-1, 0, 1, 2, 3, 4]);
    expect((await harness.rows()).every((row) => row.status === 'published')).toBe(true);
  });

  it('drops an expired partition of published rows, keeps those holding a pending or a dead row, and cleans DEFAULT row by row', async () => {
    const partitions = createSqlOutboxPartitionStore(harness.dataSource, 'outbox_messages', DAY);
    // Partitions 10, 9 and 8 days back, as if the app had run then.
    expect((await partitions.makeAhead(new Date(Date.now() - 10 * DAY_MS))).made).toEqual([dayName(-10), dayName(-9), dayName(-8)]);
    const at = (days: number) => new Date(Date.now() - days * DAY_MS);
    for (let n = 0; n < 3; n++) await insertAt(at(10), 'published');
    await insertAt(at(9), 'published');
    const pending = await insertAt(at(9), 'pending', 'B-1');
    await insertAt(at(8), 'published');
    const dead = await insertAt(at(8), 'dead', 'C-1');
    const oldInDefault = await insertAt(at(20), 'published');
    const recent = await insertAt(at(0), 'published', 'D-1', new Date());
    expect([pending.partition, dead.partition, oldInDefault.partition, recent.partition]).toEqual([dayName(-9), dayName(-8), 'outbox_messages_default', dayName(0)]);

    const cleaner = new OutboxCleaner(
      createSqlOutboxMaintenanceStore(harness.dataSource, 'outbox_messages', DAY),
      { publishedRetentionMs: 7 * DAY_MS, deadRetentionMs: null, batchSize: 100, maxBatchesPerRun: 10 },
      silent,
      partitions,
    );
    const outcome = await cleaner.run();

    expect(outcome.partitions).toEqual({ made: [], dropped: [dayName(-10)], kept: [dayName(-9), dayName(-8)] });
    expect(await partitionsOf()).toEqual([dayName(-9), dayName(-8), dayName(0), dayName(1), dayName(2), 'outbox_messages_default'].sort());
    // Kept partitions lose their published rows the old way; DEFAULT too; today's rows are not touched.
    const left = await query<{ id: string; status: string }>(`SELECT id::text AS id, status FROM outbox_messages ORDER BY position`);
    expect(left).toEqual([
      { id: pending.id, status: 'pending' },
      { id: dead.id, status: 'dead' },
      { id: recent.id, status: 'published' },
    ]);
    expect(outcome.published).toBe(3);

    // Lookups by id, as the console and the CLI make them, find rows in any partition.
    const maintenance = createSqlOutboxMaintenanceStore(harness.dataSource, 'outbox_messages', DAY);
    const console = createSqlOutboxConsoleStore(harness.dataSource, 'outbox_messages');
    expect((await console.get(dead.id))?.status).toBe('dead');
    expect((await maintenance.listDead('0', 10)).map((row) => row.id)).toEqual([dead.id]);
    expect(await maintenance.requeue(dead.id)).toBe('done');
    expect(await maintenance.requeue(dead.id)).toBe('pending');
    expect((await console.get(dead.id))?.status).toBe('pending');

    // Once its rows are published and past retention, the partition that was kept goes too.
    await query(`UPDATE outbox_messages SET status = 'published', published_at = $1 WHERE id = $2`, [at(9), pending.id]);
    expect((await cleaner.run()).partitions?.dropped).toEqual([dayName(-9)]);
  });

  it('makes the partitions ahead when a relaying instance starts, as its options say', async () => {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...harness.dataSource.options, synchronize: false, migrationsRun: false } as TypeOrmModuleOptions),
        OutboxModule.forRoot({ transport: new RecordingTransport(), partitioning: { interval: 'day', ahead: 4 } }),
      ],
    }).compile();
    module.useLogger(false);
    try {
      await module.init();
      expect(await partitionsOf()).toContain(dayName(4));
    } finally {
      await module.close();
    }
  });
});

describe('partitioning on a plain outbox table', () => {
  it('refuses to start a relaying instance, saying how to move the table over', async () => {
    const isolated = await isolatedDatabase('postgres');
    const options = { ...isolated.options, migrations: [CreateOutboxTable], migrationsRun: true, logging: false };
    const module = await Test.createTestingModule({
      imports: [TypeOrmModule.forRoot(options as TypeOrmModuleOptions), OutboxModule.forRoot({ transport: new RecordingTransport(), partitioning: { interval: 'hour' } })],
    }).compile();
    module.useLogger(false);
    try {
      await expect(module.init()).rejects.toThrow(/outbox table "outbox_messages" is a plain table.*docs\/operating\.md/s);
    } finally {
      await module.close().catch(() => undefined);
      await isolated.drop();
    }
  });

  it('moves a plain table\'s unsettled rows over to a partitioned one, positions kept, with the statements of docs/operating.md', async () => {
    const isolated = await isolatedDatabase('postgres');
    const partitioned = createOutboxTableMigration({ tableName: 'outbox_events', partitioning: DAY }, 1767225600001);
    const dataSource = new DataSource({ ...isolated.options, migrations: [CreateOutboxTable], migrationsRun: true, logging: false } as DataSourceOptions);
    await dataSource.initialize();
    try {
      const insert = (table: string, status: string) =>
        dataSource.query(
          `INSERT INTO ${table} (id, event_type, event_version, aggregate_type, aggregate_id, destination, occurred_at, payload, status)
           VALUES (gen_random_uuid(), 'order.placed', 1, 'order', 'A-1', 'orders', now(), '{}', $1) RETURNING position::text AS position`,
          [status],
        ) as Promise<Array<{ position: string }>>;
      for (const status of ['published', 'pending', 'published', 'dead', 'pending']) await insert('outbox_messages', status);
      await dataSource.query(`INSERT INTO outbox_messages_paused (destination) VALUES ('orders')`);
      const runner = dataSource.createQueryRunner();
      await new partitioned().up(runner);
      await runner.release();
      // As docs/operating.md, "From a plain table", gives them.
      await dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO outbox_events OVERRIDING SYSTEM VALUE SELECT * FROM outbox_messages WHERE status IN ('pending', 'dead')`);
        await manager.query(`INSERT INTO outbox_events_paused SELECT * FROM outbox_messages_paused`);
        await manager.query(`SELECT setval(pg_get_serial_sequence('outbox_events', 'position'), (SELECT coalesce(max(position), 1) FROM outbox_messages))`);
      });
      expect(await dataSource.query(`SELECT position::text AS position, status FROM outbox_events ORDER BY position`)).toEqual([
        { position: '2', status: 'pending' },
        { position: '4', status: 'dead' },
        { position: '5', status: 'pending' },
      ]);
      expect(await dataSource.query(`SELECT destination FROM outbox_events_paused`)).toEqual([{ destination: 'orders' }]);
      expect((await insert('outbox_events', 'pending'))[0].position).toBe('6');
    } finally {
      await dataSource.destroy();
      await isolated.drop();
    }
  });

  it('the partitioned migration fails on an existing plain table: it creates the table, it never converts one', async () => {
    const isolated = await isolatedDatabase('postgres');
    const dataSource = new DataSource({ ...isolated.options, migrations: [CreateOutboxTable], migrationsRun: true, logging: false } as DataSourceOptions);
    await dataSource.initialize();
    try {
      const partitioned = createOutboxTableMigration({ tableName: 'outbox_messages', partitioning: DAY }, 1767225600001);
      const runner = dataSource.createQueryRunner();
      await expect(new partitioned().up(runner)).rejects.toThrow(/already exists/);
      await runner.release();
    } finally {
      await dataSource.destroy();
      await isolated.drop();
    }
  });
});
