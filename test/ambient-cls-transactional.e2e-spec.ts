import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxWriteError } from '@nest-outbox/outbox';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { getRecordedEvents } from '@nest-outbox/outbox/testing';
import { captureReader, type CaptureMode } from './support/captured-messages';
import { isolatedDatabase } from './support/outbox-harness';
import { Parcel, PARCEL_ENTITIES } from './support/parcel.fixtures';
import { ParcelDesk } from './support/parcel-desk.fixture';

// 'postgres-wal': the WAL delivery mode, where the transaction writes logical decoding messages instead of rows.
describe.each<CaptureMode>(['postgres', 'postgres-wal'])('@nestjs-cls/transactional (TypeORM adapter) on %s', (mode) => {
  const captured = captureReader(mode);
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
        OutboxModule.forRoot(captured.options({ relay: false })),
      ],
      providers: [ParcelDesk],
    }).compile();
    module.useLogger(false);
    await module.init();
    dataSource = module.get(DataSource);
  });

  afterAll(async () => {
    if (dataSource) await captured.drop(dataSource);
    await module?.close();
    await drop?.();
  });

  const eventsOf = async (parcelId: string) => (await captured.of(dataSource, parcelId)).map((message) => message.eventType);

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
