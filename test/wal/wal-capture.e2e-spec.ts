import { CqrsModule, EventPublisher } from '@nestjs/cqrs';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { BookedEntries, EntryBooked, Journal, Ledger } from '../support/ledger.fixtures';
import { ParcelDesk } from '../support/parcel-desk.fixture';
import { Parcel } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

describe('WAL delivery mode: capture is unchanged (@nestjs/cqrs aggregates, ambient transactions)', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  const transport = new RecordingOutboxTransport();
  const typesOf = (aggregateId: string) => transport.published.filter((m) => m.key === aggregateId).map((m) => m.envelope.type);

  beforeAll(async () => {
    sandbox = await walSandbox('wal_capture');
    app = await sandbox.start(
      { transport },
      {
        entities: [Ledger, Journal],
        providers: [BookedEntries, ParcelDesk],
        imports: [
          CqrsModule.forRoot(),
          ClsModule.forRoot({
            global: true,
            plugins: [new ClsPluginTransactional({ imports: [TypeOrmModule], adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }) })],
          }),
        ],
      },
    );
  });
  afterAll(() => sandbox?.drop());

  it('streams apply()-ed events of a cqrs aggregate in order, and hands them to the EventBus after the commit', async () => {
    const ledger = app.module.get(EventPublisher).mergeObjectContext(new Ledger());
    ledger.book(500);
    ledger.book(250);
    await app.dataSource.getRepository(Ledger).save(ledger);
    await waitFor('both entries streamed', () => typesOf(ledger.id).length === 2);
    expect(transport.published.filter((m) => m.key === ledger.id).map((m) => (m.envelope.payload as EntryBooked).amountCents)).toEqual([500, 250]);
    await waitFor('both entries on the EventBus', () => app.module.get(BookedEntries).seen.filter((event) => event.ledgerId === ledger.id).length === 2);
  });

  it('streams the events of a rolled-back save only once it is retried and commits', async () => {
    const ledger = new Ledger();
    ledger.book(100);
    await expect(
      app.dataSource.transaction(async (manager) => {
        await manager.save(ledger);
        throw new Error('business rule failed after the save');
      }),
    ).rejects.toThrow('business rule failed');
    await app.dataSource.getRepository(Ledger).save(ledger);
    await waitFor('the entry streamed after the retry', () => typesOf(ledger.id).length === 1);
    const marker = Parcel.register('after-retry', 1);
    await app.dataSource.getRepository(Parcel).save(marker);
    await waitFor('a later event streamed', () => typesOf(marker.id).length === 1);
    expect(typesOf(ledger.id)).toEqual(['ledger.entry-booked']);
  });

  it('streams what a @Transactional() method saved and added, and nothing of one that threw', async () => {
    const desk = app.module.get(ParcelDesk);
    const kept = Parcel.register('desk-kept', 10);
    const refused = Parcel.register('desk-refused', 20);
    await expect(desk.register(refused, true)).rejects.toThrow('desk refused');
    await desk.register(kept);
    await waitFor("the kept parcel's events", () => typesOf(kept.id).length === 2);
    expect(typesOf(kept.id)).toEqual(['parcels.parcel-registered', 'parcels.desk-noted']);
    expect(typesOf(refused.id)).toEqual([]);
  });
});
