import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  CreateOutboxTable,
  OutboxAdmin,
  OutboxConfigurationError,
  OutboxModule,
  OutboxRelayHost,
  type OutboxModuleOptions,
} from '@nest-outbox/outbox';
import { createOutboxTableMigration } from '@nest-outbox/outbox/typeorm';
import { OutboxStats } from '@nest-outbox/outbox/observability';
import { OutboxCleanupHost } from '../libs/outbox/src/nest/outbox-cleanup.host';
import { runCli } from '../libs/outbox/src/cli/outbox-cli';
import { Parcel, PARCEL_ENTITIES } from './support/parcel.fixtures';
import { postgresAdmin, privateMariaDbDatabase } from './support/databases';
import { RecordingTransport } from './support/recording.transport';
import { requireService } from './support/services';
import { silentLogger } from './support/silent-logger';
import { startupFailure } from './support/startup-failure';
import { waitFor } from './support/wait-for';

const unique = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;

/**
 * The outbox in a schema of its own, which the connection's search_path does not reach: the
 * application's tables live in another schema (the search_path), so every statement of the outbox
 * that found its table anyway named the schema.
 */
describe('the schema option on PostgreSQL', () => {
  let url: string;
  const schemas: string[] = [];
  const modules: TestingModule[] = [];

  beforeAll(() => {
    url = requireService('postgres');
  });

  afterEach(async () => {
    for (const module of modules.splice(0).reverse()) await module.close();
    for (const schema of schemas.splice(0)) await postgresAdmin(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  /** An application on its own search_path schema, with the outbox in `outboxSchema`; the migration makes that schema. */
  async function instance(outboxSchema: string, options: OutboxModuleOptions, migrations = [createOutboxTableMigration({ tableName: 'outbox_messages', schema: outboxSchema })]) {
    const appSchema = unique('app');
    schemas.push(appSchema, outboxSchema);
    await postgresAdmin(url, `CREATE SCHEMA "${appSchema}"`);
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url,
          schema: appSchema,
          extra: { options: `-c search_path=${appSchema}`, max: 5 },
          entities: PARCEL_ENTITIES,
          autoLoadEntities: true,
          synchronize: true,
          migrations,
          migrationsRun: true,
          retryAttempts: 0,
        }),
        OutboxModule.forRoot({ ...options, schema: outboxSchema }),
      ],
    })
      .setLogger(silentLogger)
      .compile();
    module.useLogger(false);
    modules.push(module);
    await module.init();
    return { module, appSchema, dataSource: module.get(DataSource) };
  }

  /** The schemas that hold a table of this name. */
  const schemasOf = async (table: string) =>
    ((await query(`SELECT table_schema AS "schema" FROM information_schema.tables WHERE table_name = $1`, [table])) as Array<{ schema: string }>).map((row) => row.schema);

  async function query(sql: string, params: unknown[] = []): Promise<unknown[]> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  const statuses = async (schema: string) =>
    (await query(`SELECT aggregate_id AS "aggregateId", status FROM "${schema}".outbox_messages ORDER BY position`)) as Array<{ aggregateId: string; status: string }>;

  it('creates the schema and the tables in it, writes there, publishes from there, and counts there', async () => {
    const schema = unique('outbox_s');
    const transport = new RecordingTransport();
    const { dataSource, appSchema } = await instance(schema, { transport, pollIntervalMs: 60_000 });

    const tables = (await query(`SELECT table_schema AS "schema", table_name AS "table" FROM information_schema.tables WHERE table_schema IN ($1, $2) ORDER BY 2`, [
      schema,
      appSchema,
    ])) as Array<{ schema: string; table: string }>;
    expect(tables.filter((t) => t.table.startsWith('outbox_'))).toEqual([
      { schema, table: 'outbox_messages' },
      { schema, table: 'outbox_messages_paused' },
      { schema, table: 'outbox_messages_payloads' },
    ]);
    expect(tables).toContainEqual({ schema: appSchema, table: 'parcels' });

    const parcel = Parcel.register('in-a-schema', 1);
    await dataSource.getRepository(Parcel).save(parcel);
    // Woken by the commit, not by the poll a minute away.
    await waitFor('the event to be published', () => transport.delivered.length === 1);
    expect(transport.delivered[0]).toMatchObject({ key: parcel.id, destination: 'parcels' });
    await waitFor('the row to be settled', async () => (await statuses(schema))[0]?.status === 'published');
    expect(await statuses(schema)).toEqual([{ aggregateId: parcel.id, status: 'published' }]);
    // Nowhere else: neither on the search_path nor in public.
    const holders = await schemasOf('outbox_messages');
    expect(holders).toContain(schema);
    expect(holders).not.toContain(appSchema);
    expect(holders).not.toContain('public');

    const stats = await modules[0].get(OutboxStats).snapshot({ fresh: true });
    expect(stats).toMatchObject({ pending: 0, dead: 0, publishedLastHour: 1 });
  });

  it('wakes a relay in another instance through a channel of the schema', async () => {
    const schema = unique('outbox_s');
    const writer = await instance(schema, { relay: false });
    const transport = new RecordingTransport();
    // The relay instance shares the outbox schema, with an application schema of its own.
    await instance(schema, { transport, pollIntervalMs: 60_000 }, []);
    const channel = `outbox_${schema}.outbox_messages`;
    const listening = await query(`SELECT 1 FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${channel}"`]);
    expect(listening).toHaveLength(1);

    const parcel = Parcel.register('notified', 1);
    const committedAt = Date.now();
    await writer.dataSource.getRepository(Parcel).save(parcel);
    await waitFor('the relay instance to publish', () => transport.delivered.some((m) => m.key === parcel.id), 5_000);
    expect(Date.now() - committedAt).toBeLessThan(2_000);
  });

  it('keeps two outboxes of the same table name in two schemas apart: rows, relays, stats and wake-ups', async () => {
    const [first, second] = [unique('outbox_a'), unique('outbox_b')];
    const [firstTransport, secondTransport] = [new RecordingTransport(), new RecordingTransport()];
    const a = await instance(first, { transport: firstTransport, pollIntervalMs: 60_000 });
    const b = await instance(second, { transport: secondTransport, pollIntervalMs: 60_000 });

    const parcel = Parcel.register('only-in-a', 1);
    await a.dataSource.getRepository(Parcel).save(parcel);
    await waitFor('the first outbox to publish', () => firstTransport.delivered.length === 1);
    expect(await statuses(first)).toEqual([{ aggregateId: parcel.id, status: expect.any(String) }]);
    expect(await statuses(second)).toEqual([]);

    // The second relay, made to claim, finds nothing of the first outbox's.
    expect(await b.module.get(OutboxRelayHost).publishBatch()).toMatchObject({ claimed: 0 });
    expect(secondTransport.delivered).toEqual([]);
    expect(await b.module.get(OutboxStats).snapshot({ fresh: true })).toMatchObject({ pending: 0, publishedLastHour: 0 });
    await waitFor('the first outbox to count its row', async () => (await a.module.get(OutboxStats).snapshot({ fresh: true })).publishedLastHour === 1);

    // Each relay listens on the channel of its own schema.
    const listens = [`LISTEN "outbox_${first}.outbox_messages"`, `LISTEN "outbox_${second}.outbox_messages"`];
    const channels = (await query(`SELECT query FROM pg_stat_activity WHERE query = ANY($1) ORDER BY 1`, [listens])) as Array<{ query: string }>;
    expect(channels.map((row) => row.query)).toEqual([...listens].sort());
    // And a commit in the second wakes only the second.
    const other = Parcel.register('only-in-b', 2);
    await b.dataSource.getRepository(Parcel).save(other);
    await waitFor('the second outbox to publish', () => secondTransport.delivered.length === 1);
    expect(secondTransport.delivered[0].key).toBe(other.id);
    expect(firstTransport.delivered.map((m) => m.key)).toEqual([parcel.id]);
  });

  it('requeues a dead row and deletes published rows in the schema (admin and cleanup)', async () => {
    const schema = unique('outbox_s');
    const transport = new RecordingTransport();
    const { dataSource, module } = await instance(schema, {
      transport,
      pollIntervalMs: 60_000,
      leaseMs: 1_000,
      publishTimeoutMs: 500,
      cleanup: { publishedRetentionMs: 1_000, intervalMs: 3_600_000 },
    });
    await dataSource.getRepository(Parcel).save(Parcel.register('dies', 1));
    await waitFor('the first publish', () => transport.delivered.length === 1);
    await waitFor('the row to be settled', async () => (await statuses(schema))[0]?.status === 'published');
    await query(`UPDATE "${schema}".outbox_messages SET status = 'dead', dead_at = now(), published_at = NULL, attempts = 3`);

    const admin = module.get(OutboxAdmin);
    const [dead] = await admin.listDead();
    expect(dead).toMatchObject({ type: 'parcels.parcel-registered', attempts: 3 });
    await admin.requeue(dead.id);
    await waitFor('the requeued row to be published again', () => transport.delivered.length === 2);
    await waitFor('the row to be settled again', async () => (await statuses(schema))[0]?.status === 'published');

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await module.get(OutboxCleanupHost).runNow()).toEqual({ published: 1, dead: 0 });
    expect(await statuses(schema)).toEqual([]);
  });

  it('fails at startup when the table is not in the schema, naming the schema and the migration to add', async () => {
    const schema = unique('outbox_s');
    // The default migration makes the table on the search_path, not in the schema.
    const failure = await instance(schema, { relay: false }, [CreateOutboxTable]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OutboxConfigurationError);
    expect((failure as Error).message).toContain(`Outbox table "${schema}.outbox_messages" cannot be read`);
    expect((failure as Error).message).toContain(`createOutboxTableMigration({ tableName: 'outbox_messages', schema: '${schema}' })`);
  });

  it('nest-outbox --schema reads and changes the table in the schema, whatever the search_path', async () => {
    const schema = unique('outbox_s');
    const { dataSource } = await instance(schema, { relay: false });
    await dataSource.getRepository(Parcel).save([Parcel.register('one', 1), Parcel.register('two', 2)]);
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli([...argv, '--url', url, '--schema', schema], { out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const status = await cli('status');
    expect(status).toMatchObject({ code: 0, err: '' });
    expect(status.out).toContain('pending 2');
    expect(await cli('pause', 'parcels')).toMatchObject({ code: 0 });
    expect(await query(`SELECT destination FROM "${schema}".outbox_messages_paused`)).toEqual([{ destination: 'parcels' }]);
    const ddl = await cli('sql', '--dialect', 'postgres');
    expect(ddl.out).toContain(`CREATE SCHEMA IF NOT EXISTS "${schema}";`);
    expect(ddl.out).toContain(`CREATE TABLE "${schema}"."outbox_messages" (`);
  });
});

describe('the schema option on MariaDB', () => {
  it('fails at startup naming the option, and points to the DataSource database', async () => {
    const { url, drop } = await privateMariaDbDatabase('s');
    try {
      const failure = await startupFailure(
        { type: 'mariadb', url, entities: PARCEL_ENTITIES, synchronize: true, migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0 },
        [OutboxModule.forRoot({ relay: false, schema: 'billing' })],
      );
      expect(failure).toBeInstanceOf(OutboxConfigurationError);
      expect((failure as Error).message).toMatch(/option "schema" \("billing"\): a schema is supported on PostgreSQL only/);
      expect((failure as Error).message).toMatch(/set "database" in the DataSource options/);
    } finally {
      await drop();
    }
  });
});
