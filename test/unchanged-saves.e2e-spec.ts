import { OutboxConfigurationError, PublishesEvents } from '@nest-outbox/outbox';
import { getRecordedEvents } from '@nest-outbox/outbox/testing';
import { createOutboxHarness, type OutboxHarness, type TestDatabase } from './support/outbox-harness';
import { Parcel } from './support/parcel.fixtures';

describe.each<TestDatabase>(['postgres', 'sqlite', 'mariadb'])('A save that changes no column, on %s', (database) => {
  let harness: OutboxHarness;

  beforeAll(async () => {
    harness = await createOutboxHarness(database);
  });

  afterAll(() => harness?.close());

  const rowsOf = async (parcel: Parcel) => (await harness.rows()).filter((row) => row.aggregateId === parcel.id).map((row) => row.eventType);

  async function storedParcel(): Promise<Parcel> {
    const parcel = Parcel.register('unchanged', 100);
    await harness.dataSource.getRepository(Parcel).save(parcel);
    return harness.dataSource.getRepository(Parcel).findOneByOrFail({ id: parcel.id });
  }

  it('writes the recorded event even though TypeORM runs no statement for the entity', async () => {
    const parcel = await storedParcel();
    parcel.discard();
    await harness.dataSource.getRepository(Parcel).save(parcel);
    expect(await rowsOf(parcel)).toEqual(['parcels.parcel-registered', 'parcels.parcel-discarded']);
    expect(getRecordedEvents(parcel)).toEqual([]);
  });

  it('writes it in the caller transaction: gone with a rollback, kept on the aggregate and written by the retry', async () => {
    const parcel = await storedParcel();
    parcel.discard();
    const failure = await harness.dataSource
      .transaction(async (manager) => {
        await manager.save(parcel);
        expect(await manager.getRepository('OutboxMessage').countBy({ aggregateId: parcel.id, eventType: 'parcels.parcel-discarded' })).toBe(1);
        throw new Error('rolled back after the save');
      })
      .catch((error: Error) => error.message);
    expect(failure).toBe('rolled back after the save');
    expect(await rowsOf(parcel)).toEqual(['parcels.parcel-registered']);
    await harness.dataSource.transaction((manager) => manager.save(Parcel, parcel));
    expect(await rowsOf(parcel)).toEqual(['parcels.parcel-registered', 'parcels.parcel-discarded']);
    // Saving again writes nothing more: the event was committed.
    await harness.dataSource.getRepository(Parcel).save(parcel);
    expect(await rowsOf(parcel)).toEqual(['parcels.parcel-registered', 'parcels.parcel-discarded']);
  });

  it('writes events of entities saved without listeners, which TypeORM would not show the outbox', async () => {
    const parcel = Parcel.register('quiet', 5);
    await harness.dataSource.getRepository(Parcel).save(parcel, { listeners: false });
    expect(await rowsOf(parcel)).toEqual(['parcels.parcel-registered']);
  });
});

describe('@PublishesEvents on a class that cannot hand over its events', () => {
  it('fails at decoration, saying which base class or mixin to use', () => {
    const decorate = () => {
      @PublishesEvents({ aggregateType: 'plain' })
      class PlainEntity {
        id = '1';
      }
      return PlainEntity;
    };
    expect(decorate).toThrow(OutboxConfigurationError);
    expect(decorate).toThrow(/PlainEntity has no way to hand its events to the outbox.*Extend OutboxAggregateRoot, or WithOutboxEvents\(YourBase\).*AggregateRoot/);
  });
});
