import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { addTransactionalDataSource, deleteDataSourceByName, initializeTransactionalContext, Transactional } from 'typeorm-transactional';
import { CreateOutboxTable, OutboxModule, OutboxPublisher, OutboxWriteError } from '@nest-outbox/outbox';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { getRecordedEvents } from '@nest-outbox/outbox/testing';
import { captureReader, type CaptureMode } from './support/captured-messages';
import { isolatedDatabase } from './support/outbox-harness';
import { Parcel, PARCEL_ENTITIES } from './support/parcel.fixtures';

@Injectable()
class ParcelDesk {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxPublisher,
  ) {}

  @Transactional()
  async register(parcel: Parcel, failAfterWrite = false): Promise<void> {
    await this.dataSource.getRepository(Parcel).save(parcel);
    await this.outbox.add({ type: 'parcels.desk-noted', aggregateType: 'parcel', aggregateId: parcel.id, payload: { by: 'desk' }, topic: 'parcels' });
    if (failAfterWrite) throw new Error('desk refused after writing');
  }

  async noteOutsideTransaction(parcelId: string): Promise<string[]> {
    return this.outbox.add({ type: 'parcels.desk-noted', aggregateType: 'parcel', aggregateId: parcelId, payload: {}, topic: 'parcels' });
  }
}

// 'postgres-wal': the WAL delivery mode, where the transaction writes logical decoding messages instead of rows.
describe.each<CaptureMode>(['postgres', 'postgres-wal'])('typeorm-transactional on %s', (mode) => {
  const captured = captureReader(mode);
  let module: TestingModule;
  let dataSource: DataSource;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    initializeTransactionalContext();
    const isolated = await isolatedDatabase('postgres');
    drop = isolated.drop;
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () =>
            ({
              ...isolated.options,
              entities: PARCEL_ENTITIES,
              autoLoadEntities: true,
              synchronize: true,
              migrations: [CreateOutboxTable],
              migrationsRun: true,
            }) as TypeOrmModuleOptions,
          dataSourceFactory: async (options) => addTransactionalDataSource(new DataSource(options as DataSourceOptions)),
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
    // typeorm-transactional keeps its data sources process-wide: the next mode adds its own.
    deleteDataSourceByName('default');
    await drop?.();
  });

  const eventsOf = async (parcelId: string) => (await captured.of(dataSource, parcelId)).map((message) => message.eventType);

  it('captures the save and adds without a manager, both in the @Transactional() transaction', async () => {
    const parcel = Parcel.register('typeorm-transactional', 7);
    await module.get(ParcelDesk).register(parcel);
    expect(await eventsOf(parcel.id)).toEqual(['parcels.parcel-registered', 'parcels.desk-noted']);
  });

  it('rolls both back with the transaction, and keeps the recorded event on the aggregate', async () => {
    const parcel = Parcel.register('typeorm-transactional-rollback', 8);
    await expect(module.get(ParcelDesk).register(parcel, true)).rejects.toThrow('desk refused after writing');
    expect(await eventsOf(parcel.id)).toEqual([]);
    expect(await dataSource.getRepository(Parcel).countBy({ id: parcel.id })).toBe(0);
    expect(getRecordedEvents(parcel)).toHaveLength(1);
  });

  it('refuses to add without a manager outside any transaction, saying what to do', async () => {
    const failure = await module.get(ParcelDesk).noteOutsideTransaction('p-none').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutboxWriteError);
    expect((failure as Error).message).toMatch(/without an EntityManager and outside any transaction/);
  });
});
