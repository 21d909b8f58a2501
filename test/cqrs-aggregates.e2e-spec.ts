import { CqrsModule, EventPublisher } from '@nestjs/cqrs';
import type { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { OutboxWriteError } from '@nest-outbox/outbox';
import type { CaptureMode, CapturedMessage } from './support/captured-messages';
import { startCapturingApp, type CapturingApp } from './support/capturing-app';
import { waitFor } from './support/wait-for';
import { BookedEntries, EntryBooked, Journal, Ledger } from './support/ledger.fixtures';
import { PARCEL_ENTITIES } from './support/parcel.fixtures';

// 'postgres-wal': the WAL delivery mode, where the save writes a logical decoding message instead of a row.
describe.each<CaptureMode>(['postgres', 'postgres-wal', 'sqlite', 'mariadb'])('@nestjs/cqrs aggregates on %s', (mode) => {
  let app: CapturingApp;
  let module: TestingModule;
  let dataSource: DataSource;

  beforeAll(async () => {
    app = await startCapturingApp(mode, { entities: [...PARCEL_ENTITIES, Ledger, Journal], imports: [CqrsModule.forRoot()], providers: [BookedEntries] });
    ({ module, dataSource } = app);
  });

  afterAll(() => app?.close());

  const rowsOf = (aggregate: { id: string }) => app.captured.of(dataSource, aggregate.id);

  it('writes apply()-ed events with the save and commits them to the aggregate, and so to the EventBus, after the commit', async () => {
    const handler = module.get(BookedEntries);
    const ledger = module.get(EventPublisher).mergeObjectContext(new Ledger());
    ledger.book(500);
    ledger.book(250);
    await dataSource.getRepository(Ledger).save(ledger);
    const rows = await rowsOf(ledger);
    expect(rows.map((row) => [row.eventType, row.aggregateType, amountOf(row)])).toEqual([
      ['ledger.entry-booked', 'ledger', 500],
      ['ledger.entry-booked', 'ledger', 250],
    ]);
    expect(ledger.getUncommittedEvents()).toEqual([]);
    expect(ledger.balanceCents).toBe(750);
    await waitForHandler(handler, ledger.id, 2);
  });

  it('keeps the events uncommitted on the aggregate when the transaction rolls back, and writes them on the retry', async () => {
    const ledger = new Ledger();
    ledger.book(100);
    const failure = await dataSource
      .transaction(async (manager) => {
        await manager.save(ledger);
        throw new Error('business rule failed after the save');
      })
      .catch((error: Error) => error);
    expect((failure as Error).message).toBe('business rule failed after the save');
    expect(await rowsOf(ledger)).toHaveLength(0);
    expect(ledger.getUncommittedEvents()).toHaveLength(1);
    await dataSource.transaction((manager) => manager.save(ledger));
    expect(await rowsOf(ledger)).toHaveLength(1);
    expect(ledger.getUncommittedEvents()).toEqual([]);
  });

  it('keeps the events for a retry when the savepoint that wrote them rolls back', async () => {
    const ledger = new Ledger();
    ledger.book(42);
    await dataSource.transaction(async (outer) => {
      await outer
        .transaction(async (inner) => {
          await inner.save(ledger);
          throw new Error('savepoint rolled back');
        })
        .catch(() => undefined);
      expect(ledger.getUncommittedEvents()).toHaveLength(1);
      await outer.save(ledger);
      // Not committed to the aggregate before the outermost commit.
      expect(ledger.getUncommittedEvents()).toHaveLength(1);
    });
    expect((await rowsOf(ledger)).map((row) => amountOf(row))).toEqual([42]);
    expect(ledger.getUncommittedEvents()).toEqual([]);
  });

  it('writes an event applied before a save that changes no column, in that save', async () => {
    const ledger = new Ledger();
    await dataSource.getRepository(Ledger).save(ledger);
    const loaded = (await dataSource.getRepository(Ledger).findOneByOrFail({ id: ledger.id })) as Ledger;
    // A zero booking leaves every column as it is: TypeORM runs no UPDATE and calls no subscriber.
    loaded.book(0);
    await dataSource.getRepository(Ledger).save(loaded);
    expect((await rowsOf(ledger)).map((row) => row.eventType)).toEqual(['ledger.entry-booked']);
    expect(loaded.getUncommittedEvents()).toEqual([]);
  });

  it('writes one message for an event object both applied and recorded, and hands it to the EventBus once', async () => {
    const handler = module.get(BookedEntries);
    const journal = module.get(EventPublisher).mergeObjectContext(new Journal());
    const booked = journal.bookEverywhere(250);

    await dataSource.transaction((manager) => manager.save(journal));

    const rows = await rowsOf(journal);
    expect(rows.map((row) => [row.eventType, JSON.parse(row.payload), row.correlationId])).toEqual([['ledger.entry-booked', { ledgerId: journal.id, amountCents: 250 }, 'journal']]);
    expect(journal.getUncommittedEvents()).toEqual([]);
    await waitFor('the EventBus handler', () => handler.seen.includes(booked));
    expect(handler.seen.filter((event) => event === booked)).toHaveLength(1);

    // Nothing is left to write: a second save adds no row.
    journal.balanceCents += 1;
    await dataSource.transaction((manager) => manager.save(journal));
    expect(await rowsOf(journal)).toHaveLength(1);
  });

  it('refuses to save an aggregate with autoCommit on, whose events would bypass the outbox', async () => {
    const ledger = new Ledger();
    ledger.autoCommit = true;
    ledger.book(1);
    const failure = await dataSource.getRepository(Ledger).save(ledger).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutboxWriteError);
    expect((failure as Error).message).toMatch(/autoCommit on.*Leave autoCommit off/);
  });
});

async function waitForHandler(handler: BookedEntries, ledgerId: string, count: number): Promise<void> {
  await waitFor(`${count} EntryBooked events on the EventBus`, () => handler.seen.filter((event) => event.ledgerId === ledgerId).length === count);
}

function amountOf(row: CapturedMessage): number {
  return (JSON.parse(row.payload) as EntryBooked).amountCents;
}
