import { randomBytes } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type EntityManager, type Logger as TypeOrmLogger } from 'typeorm';
import { OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { Parcel } from './support/parcel.fixtures';
import { postgresAdmin as admin } from './support/databases';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';
import { postgresSchemaTypeOrm } from './support/capturing-app';

/** Keeps the outbox INSERTs TypeORM's logger was told about. */
class InsertLog implements TypeOrmLogger {
  readonly inserts: string[] = [];
  logQuery(query: string): void {
    if (query.includes('INSERT INTO "outbox_messages"')) this.inserts.push(query);
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

/** The outbox statements prepared on the connection of `manager`'s transaction (pg_prepared_statements is per session). */
const preparedOutboxStatements = async (manager: EntityManager) =>
  (await manager.query(`SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'nest_outbox_%' AND statement LIKE '%INSERT INTO%'`)) as Array<{ name: string; statement: string }>;

describe('PostgreSQL: the outbox INSERT and the relay’s statements as named prepared statements', () => {
  let url: string;
  const started: Array<{ module: TestingModule; schema: string }> = [];

  async function start(preparedStatements?: boolean, transport?: RecordingOutboxTransport): Promise<{ dataSource: DataSource; publisher: OutboxPublisher; log: InsertLog }> {
    const schema = `prepared_${randomBytes(5).toString('hex')}`;
    const log = new InsertLog();
    await admin(url, `CREATE SCHEMA ${schema}`);
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...postgresSchemaTypeOrm(url, schema, { max: 1 }), logging: ['query'], logger: log }),
        OutboxModule.forRoot({
          // The LISTEN connection would hold the pool's only connection: the relay polls instead.
          ...(transport ? { transport, pollIntervalMs: 100, notifications: false } : { relay: false }),
          defaultTopic: 'parcels',
          ...(preparedStatements === undefined ? {} : { preparedStatements }),
        }),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
    started.push({ module, schema });
    return { dataSource: module.get(DataSource), publisher: module.get(OutboxPublisher), log };
  }

  beforeAll(() => {
    url = requireService('postgres');
  });

  afterEach(async () => {
    for (const { module, schema } of started.splice(0)) {
      await module.close();
      await admin(url, `DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('prepares each form of the INSERT once per connection and reuses it in later transactions; TypeORM still logs it', async () => {
    const { dataSource, log } = await start();
    const saveThree = () =>
      dataSource.transaction(async (manager) => {
        for (const label of ['a', 'b', 'c']) await manager.save(Parcel.register(label, 1));
        return preparedOutboxStatements(manager);
      });

    const first = await saveThree();
    const second = await saveThree(); // one pooled connection: the same session

    // Two forms: the transaction's first insert carries the NOTIFY, the others do not.
    expect(first.map((statement) => statement.statement.includes('pg_notify')).sort()).toEqual([false, true]);
    expect(first.every((statement) => statement.statement.includes('INSERT INTO "outbox_messages"'))).toBe(true);
    expect(second.map((statement) => statement.name).sort()).toEqual(first.map((statement) => statement.name).sort());
    expect(log.inserts).toHaveLength(6);
    expect(Number((await dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n)).toBe(6);
  });

  it('with preparedStatements: false sends the INSERT unnamed', async () => {
    const { dataSource } = await start(false);
    const prepared = await dataSource.transaction(async (manager) => {
      await manager.save(Parcel.register('unnamed', 1));
      return preparedOutboxStatements(manager);
    });

    expect(prepared).toEqual([]);
    expect(Number((await dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n)).toBe(1);
  });

  // One pooled connection: the relay's claims and settles ran on the session the test then asks.
  const preparedRelayStatements = async (dataSource: DataSource) =>
    ((await dataSource.query(`SELECT statement FROM pg_prepared_statements WHERE name LIKE 'nest_outbox_%' AND statement NOT LIKE '%INSERT INTO%'`)) as Array<{ statement: string }>).map(
      ({ statement }) => statement,
    );

  async function publishTwoRounds(preparedStatements?: boolean) {
    const transport = new RecordingOutboxTransport();
    const { dataSource } = await start(preparedStatements, transport);
    for (const count of [1, 2]) {
      await dataSource.transaction((manager) => manager.save(Parcel.register(`parcel ${count}`, 1)));
      await waitFor(`event ${count} published`, () => transport.published.length === count, 10_000);
    }
    return { dataSource, transport };
  }

  it('runs the relay’s claim and settle as named statements, prepared once per connection', async () => {
    const { dataSource, transport } = await publishTwoRounds();

    const statements = await preparedRelayStatements(dataSource);
    expect(statements.some((sql) => /FOR UPDATE OF m SKIP LOCKED/.test(sql))).toBe(true); // the claim
    expect(statements.some((sql) => /SET status = 'published', published_at = now\(\)/.test(sql))).toBe(true); // marking published
    expect(new Set(statements).size).toBe(statements.length);
    expect(transport.published).toHaveLength(2);
    expect(Number((await dataSource.query(`SELECT count(*) AS n FROM outbox_messages WHERE status = 'published'`))[0].n)).toBe(2);
  });

  it('with preparedStatements: false runs the relay’s statements unnamed', async () => {
    const { dataSource, transport } = await publishTwoRounds(false);

    expect(await preparedRelayStatements(dataSource)).toEqual([]);
    expect(transport.published).toHaveLength(2);
  });

  it('fails the transaction with a QueryFailedError when the INSERT fails, writing nothing', async () => {
    const { dataSource, publisher } = await start();
    await dataSource.query(`ALTER TABLE outbox_messages ADD CONSTRAINT no_refunds CHECK (event_type <> 'refund.issued')`);
    const parcel = Parcel.register('kept?', 1);

    const attempt = dataSource.transaction(async (manager) => {
      await manager.save(parcel);
      await publisher.add(manager, { type: 'refund.issued', aggregateType: 'refund', aggregateId: 'r-1', payload: {} });
    });

    await expect(attempt).rejects.toBeInstanceOf(QueryFailedError);
    await expect(attempt).rejects.toThrow(/no_refunds/);
    expect(Number((await dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n)).toBe(0);
    expect(await dataSource.getRepository(Parcel).countBy({ id: parcel.id })).toBe(0);
  });
});
