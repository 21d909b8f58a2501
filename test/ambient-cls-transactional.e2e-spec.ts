import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxWriteError } from '@nest-outbox/outbox';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { getRecordedEvents } from '@nest-outbox/outbox/testing';
import { isolatedDatabase } from './support/outbox-harness';
import { Parcel, PARCEL_ENTITIES } from './support/parcel.fixtures';
import { ParcelDesk } from './support/parcel-desk.fixture';

describe('@nestjs-cls/transactional (TypeORM adapter) on PostgreSQL', () => {
  let module: TestingModule;
  let dataSource: DataSource;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const isolated = await isolatedDatabase('postgres');
    drop = isolated.drop;
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          ...isolated.options,
          entities: PARCEL_ENTITIES,
          autoLoadEntities: true,
          synchronize: true,
          migrations: [CreateOutboxTable],
          migrationsRun: true,
        } as TypeOrmModuleOptions),
        ClsModule.forRoot({
          global: true,
          plugins: [
            new ClsPluginTransactional({
              imports: [TypeOrmModule],
              adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
            }),
          ],
        }),
        OutboxModule.forRoot({ relay: false }),
      ],
      providers: [ParcelDesk],
    }).compile();
    module.useLogger(false);
    await module.init();
    dataSource = module.get(DataSource);
  });

  afterAll(async () => {
    await module?.close();
    await drop?.();
  });

  const eventsOf = async (parcelId: string) =>
    (await dataSource.getRepository(outboxMessageEntity()).find({ where: { aggregateId: parcelId }, order: { position: 'ASC' } })).map((row) => row.eventType);

  it('captures the save and adds without a manager, both in the @Transactional() transaction', async () => {
    const parcel = Parcel.register('cls', 7);
    await module.get(ParcelDesk).register(parcel);
    expect(await eventsOf(parcel.id)).toEqual(['parcels.parcel-registered', 'parcels.desk-noted']);
  });

  it('rolls both back with the transaction, and keeps the recorded event on the aggregate', async () => {
    const parcel = Parcel.register('cls-rollback', 8);
    await expect(module.get(ParcelDesk).register(parcel, true)).rejects.toThrow('desk refused after writing');
    expect(await eventsOf(parcel.id)).toEqual([]);
    expect(await dataSource.getRepository(Parcel).countBy({ id: parcel.id })).toBe(0);
    expect(getRecordedEvents(parcel)).toHaveLength(1);
  });

  it('refuses to add without a manager outside any transaction, saying what to do', async () => {
    const failure = await module.get(ParcelDesk).noteOutsideTransaction('p-none').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutboxWriteError);
    expect((failure as Error).message).toMatch(/without an EntityManager and outside any transaction.*@Transactional\(\)/);
  });
});
