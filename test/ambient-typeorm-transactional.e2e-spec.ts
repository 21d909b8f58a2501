import { Injectable } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { addTransactionalDataSource, deleteDataSourceByName, initializeTransactionalContext, Transactional } from 'typeorm-transactional';
import { OutboxPublisher } from '@nest-outbox/outbox';
import { itWritesInTheAmbientTransaction } from './support/ambient-transaction.cases';
import type { CaptureMode } from './support/captured-messages';
import { startCapturingApp, type CapturingApp } from './support/capturing-app';
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
  let app: CapturingApp;

  beforeAll(async () => {
    initializeTransactionalContext();
    app = await startCapturingApp(mode, {
      entities: PARCEL_ENTITIES,
      // typeorm-transactional wraps the data source TypeORM makes.
      typeOrm: (options) => TypeOrmModule.forRootAsync({ useFactory: () => options, dataSourceFactory: async (options) => addTransactionalDataSource(new DataSource(options as DataSourceOptions)) }),
      providers: [ParcelDesk],
    });
  });

  afterAll(async () => {
    await app?.close();
    // typeorm-transactional keeps its data sources process-wide: the next mode adds its own.
    deleteDataSourceByName('default');
  });

  itWritesInTheAmbientTransaction('typeorm-transactional', () => app, ParcelDesk, /without an EntityManager and outside any transaction/);
});
