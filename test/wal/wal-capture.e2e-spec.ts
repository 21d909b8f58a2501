import { Injectable } from '@nestjs/common';
import { CqrsModule, EventPublisher, EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { OutboxPublisher, RecordingOutboxTransport } from '@nest-outbox/outbox';
import { EntryBooked, Journal, Ledger } from '../support/ledger.fixtures';
import { Parcel } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

@Injectable()
@EventsHandler(EntryBooked)
class BookedEntries implements IEventHandler<EntryBooked> {
  readonly seen: EntryBooked[] = [];
  handle(event: EntryBooked): void {
    this.seen.push(event);
  }
}

@Injectable()
class ParcelDesk {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly outbox: OutboxPublisher,
  ) {}

  @Transactional()
  async register(parcel: Parcel, failAfterWrite = false): Promise<void> {
    await this.txHost.tx.getRepository(Parcel).save(parcel);
    await this.outbox.add({ type: 'parcels.desk-noted', aggregateType: 'parcel', aggregateId: parcel.id, payload: { by: 'desk' }, topic: 'parcels' });
    if (failAfterWrite) throw new Error('desk refused after writing');
  }
}

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
