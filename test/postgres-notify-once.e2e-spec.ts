import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { Parcel } from './support/parcel.fixtures';
import { postgresAdmin as admin } from './support/databases';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';
import { postgresSchemaTypeOrm } from './support/capturing-app';

/** Counts the statements that carry the outbox notification. */
class NotifyCounter implements TypeOrmLogger {
  notifies = 0;
  logQuery(query: string): void {
    if (query.includes('pg_notify')) this.notifies++;
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

describe('PostgreSQL: one NOTIFY per transaction', () => {
  const schema = `notify_once_${randomBytes(5).toString('hex')}`;
  const channel = 'outbox_outbox_messages';
  const counter = new NotifyCounter();
  let url: string;
  let module: TestingModule;
  let dataSource: DataSource;
  let publisher: OutboxPublisher;
  let listener: Client;
  const received: string[] = [];

  const event = (label: string) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId: label, payload: { label }, topic: 'parcels' });
  const rows = async (label: string) => Number((await dataSource.query(`SELECT count(*) AS n FROM outbox_messages WHERE aggregate_id = $1`, [label]))[0].n);

  beforeAll(async () => {
    url = requireService('postgres');
    await admin(url, `CREATE SCHEMA ${schema}`);
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...postgresSchemaTypeOrm(url, schema), logging: ['query'], logger: counter }),
        OutboxModule.forRoot({ relay: false, defaultTopic: 'parcels' }),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
    dataSource = module.get(DataSource);
    publisher = module.get(OutboxPublisher);
    listener = new Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (notification) => received.push(notification.channel));
    await listener.query(`LISTEN "${channel}"`);
  });

  beforeEach(() => {
    counter.notifies = 0;
    received.length = 0;
  });

  afterAll(async () => {
    await listener?.end();
    await module?.close();
    await admin(url, `DROP SCHEMA ${schema} CASCADE`);
  });

  it('sends the notification with the first outbox insert of a transaction only, and again in the next transaction', async () => {
    await dataSource.transaction(async (manager) => {
      await publisher.add(manager, event('once-a'));
      await manager.getRepository(Parcel).save(Parcel.register('once-b', 1));
      await publisher.add(manager, [event('once-c'), event('once-d')]);
    });
    expect(counter.notifies).toBe(1);
    await waitFor('the notification after commit', () => received.length > 0, 5_000);
    expect(await rows('once-a')).toBe(1);

    await dataSource.transaction((manager) => publisher.add(manager, event('once-e')));
    expect(counter.notifies).toBe(2);
    await waitFor('the second transaction’s notification', () => received.length > 1, 5_000);
  });

  it('notifies again after the savepoint that carried the notification rolled back (PostgreSQL drops it with the savepoint)', async () => {
    await dataSource.transaction(async (manager) => {
      await expect(
        manager.transaction(async (inner) => {
          await publisher.add(inner, event('rolled-back'));
          throw new Error('undo the savepoint');
        }),
      ).rejects.toThrow('undo the savepoint');
      await publisher.add(manager, event('kept'));
      await publisher.add(manager, event('kept-too'));
    });
    expect(counter.notifies).toBe(2);
    expect(await rows('rolled-back')).toBe(0);
    expect(await rows('kept')).toBe(1);
    await waitFor('the notification of the outer transaction', () => received.length > 0, 5_000);
  });

  it('keeps the notification of a released savepoint for the enclosing transaction', async () => {
    await dataSource.transaction(async (manager) => {
      await manager.transaction((inner) => publisher.add(inner, event('released')));
      await publisher.add(manager, event('after-release'));
    });
    expect(counter.notifies).toBe(1);
    await waitFor('the notification sent inside the released savepoint', () => received.length > 0, 5_000);
  });
});
