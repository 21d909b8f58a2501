import type { Type } from '@nestjs/common';
import { OutboxWriteError } from '@nest-outbox/outbox';
import { getRecordedEvents } from '@nest-outbox/outbox/testing';
import type { CapturingApp } from './capturing-app';
import { Parcel } from './parcel.fixtures';

/** A service that saves a parcel and adds an event without a manager, in the ambient transaction of a library's @Transactional(). */
export interface AmbientDesk {
  register(parcel: Parcel, failAfterWrite?: boolean): Promise<void>;
  noteOutsideTransaction(parcelId: string): Promise<unknown>;
}

/**
 * The cases every ambient-transaction library (@nestjs-cls/transactional, typeorm-transactional)
 * must pass: the save's capture and the add without a manager join its transaction, roll back with
 * it, and an add outside any transaction is refused with a message that says what to do.
 */
export function itWritesInTheAmbientTransaction(label: string, app: () => CapturingApp, desk: Type<AmbientDesk>, refusal: RegExp): void {
  it('captures the save and adds without a manager, both in the @Transactional() transaction', async () => {
    const parcel = Parcel.register(label, 7);
    await app().module.get(desk).register(parcel);
    expect(await app().eventsOf(parcel.id)).toEqual(['parcels.parcel-registered', 'parcels.desk-noted']);
  });

  it('rolls both back with the transaction, and keeps the recorded event on the aggregate', async () => {
    const parcel = Parcel.register(`${label}-rollback`, 8);
    await expect(app().module.get(desk).register(parcel, true)).rejects.toThrow('desk refused after writing');
    expect(await app().eventsOf(parcel.id)).toEqual([]);
    expect(await app().dataSource.getRepository(Parcel).countBy({ id: parcel.id })).toBe(0);
    expect(getRecordedEvents(parcel)).toHaveLength(1);
  });

  it('refuses to add without a manager outside any transaction, saying what to do', async () => {
    const failure = await app().module.get(desk).noteOutsideTransaction('p-none').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutboxWriteError);
    expect((failure as Error).message).toMatch(refusal);
  });
}
