import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { itWritesInTheAmbientTransaction } from './support/ambient-transaction.cases';
import type { CaptureMode } from './support/captured-messages';
import { startCapturingApp, type CapturingApp } from './support/capturing-app';
import { PARCEL_ENTITIES } from './support/parcel.fixtures';
import { ParcelDesk } from './support/parcel-desk.fixture';

// 'postgres-wal': the WAL delivery mode, where the transaction writes logical decoding messages instead of rows.
describe.each<CaptureMode>(['postgres', 'postgres-wal'])('@nestjs-cls/transactional (TypeORM adapter) on %s', (mode) => {
  let app: CapturingApp;

  beforeAll(async () => {
    app = await startCapturingApp(mode, {
      entities: PARCEL_ENTITIES,
      imports: [
        ClsModule.forRoot({
          global: true,
          plugins: [new ClsPluginTransactional({ imports: [TypeOrmModule], adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }) })],
        }),
      ],
      providers: [ParcelDesk],
    });
  });

  afterAll(() => app?.close());

  itWritesInTheAmbientTransaction('cls', () => app, ParcelDesk, /without an EntityManager and outside any transaction.*@Transactional\(\)/);
});
