import { OutboxPublisher } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import type { DataSource, EntityManager } from 'typeorm';
import { createOutboxHarness, type OutboxHarness } from '../support/outbox-harness';
import { Parcel } from '../support/parcel.fixtures';

/**
 * SQLite through TypeORM is one connection shared by every caller: two overlapping transactions used
 * to nest silently, so one request's rollback took the others' writes with it, or one request's
 * commit published the event of a transaction that had thrown. The outbox gives the connection to
 * one transaction at a time.
 */
describe('SQLite: overlapping transactions', () => {
  let outbox: OutboxHarness;
  let dataSource: DataSource;

  beforeEach(async () => {
    outbox = await createOutboxHarness('sqlite');
    dataSource = outbox.dataSource;
  });

  afterEach(() => outbox.close());

  /** A save in a transaction that lets the other transactions start before it ends. */
  async function saveParcel(label: string, fail: boolean): Promise<string> {
    return dataSource.transaction(async (manager) => {
      const parcel = Parcel.register(label, 100);
      await manager.save(parcel);
      await new Promise((resolve) => setImmediate(resolve));
      await manager.getRepository(Parcel).findOneByOrFail({ id: parcel.id });
      if (fail) throw new Error(`refused ${label}`);
      return parcel.id;
    });
  }

  it('commits each of 50 overlapping saves with its event and nothing of the ones that threw', async () => {
    const labels = Array.from({ length: 50 }, (_, i) => ({ label: `p${i}`, fail: i % 5 === 0 }));
    const outcomes = await Promise.allSettled(labels.map(({ label, fail }) => saveParcel(label, fail)));

    outcomes.forEach((outcome, i) => {
      if (labels[i].fail) expect(outcome).toMatchObject({ status: 'rejected', reason: { message: `refused p${i}` } });
      else expect(outcome.status).toBe('fulfilled');
    });
    const committed = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const parcels = await dataSource.getRepository(Parcel).find();
    expect(parcels.map((parcel) => parcel.label).sort()).toEqual(labels.filter((l) => !l.fail).map((l) => l.label).sort());
    const rows = await outbox.rows();
    expect(rows.map((row) => row.aggregateId).sort()).toEqual([...committed].sort());

    const transport = new RecordingOutboxTransport();
    await outbox.relay('relay', transport).trigger();
    expect(transport.published.map((message) => message.envelope.aggregateId).sort()).toEqual([...committed].sort());
  });

  it('keeps the writes of repository saves and explicit adds that overlap a transaction that throws', async () => {
    const publisher = outbox.module.get(OutboxPublisher);
    const parcels = dataSource.getRepository(Parcel);
    const failing = saveParcel('doomed', true);
    failing.catch(() => undefined); // asserted below, after the others
    const others = await Promise.all([
      parcels.save(Parcel.register('plain-save', 1)).then((parcel) => parcel.id),
      dataSource.transaction(async (manager) => {
        await publisher.add(manager, { type: 'parcels.audited', aggregateType: 'audit', aggregateId: 'a1', payload: {}, topic: 'audits' });
        return 'a1';
      }),
    ]);
    await expect(failing).rejects.toThrow('refused doomed');

    expect((await parcels.find()).map((parcel) => parcel.label)).toEqual(['plain-save']);
    expect((await outbox.rows()).map((row) => row.aggregateId).sort()).toEqual([...others].sort());
  });

  it('gives a query runner begun by hand its own transaction among overlapping ones', async () => {
    const manual = async (label: string, fail: boolean) => {
      const queryRunner = dataSource.createQueryRunner();
      await queryRunner.startTransaction();
      try {
        await queryRunner.manager.save(Parcel.register(label, 1));
        await new Promise((resolve) => setImmediate(resolve));
        if (fail) throw new Error(`refused ${label}`);
        await queryRunner.commitTransaction();
      } catch (error) {
        await queryRunner.rollbackTransaction();
        throw error;
      } finally {
        await queryRunner.release();
      }
    };
    const outcomes = await Promise.allSettled([manual('m1', false), manual('m2', true), saveParcel('t3', false), manual('m4', false)]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((await dataSource.getRepository(Parcel).find()).map((parcel) => parcel.label).sort()).toEqual(['m1', 'm4', 't3']);
    expect(await outbox.rows()).toHaveLength(3);
  });

  it('never lets a statement outside the transaction see its uncommitted rows', async () => {
    let inside!: () => void;
    const saved = new Promise<void>((resolve) => (inside = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const failing = dataSource.transaction(async (manager) => {
      await manager.save(Parcel.register('uncommitted', 1));
      inside();
      await released;
      throw new Error('rolled back');
    });
    await saved;
    // Issued while the transaction is open: it runs after it, and sees nothing of it.
    const counted = dataSource.getRepository(Parcel).count();
    const relayed = new RecordingOutboxTransport();
    const relayRound = outbox.relay('relay', relayed).trigger();
    release();
    await expect(failing).rejects.toThrow('rolled back');
    expect(await counted).toBe(0);
    await relayRound;
    expect(relayed.published).toEqual([]);
  });

  it('runs what the transaction callback does through the DataSource inside that transaction, as before', async () => {
    const failing = dataSource.transaction(async (manager: EntityManager) => {
      await manager.save(Parcel.register('outer', 1));
      // Not through `manager`: on SQLite this has always joined the open transaction; waiting for it would never end.
      expect(await dataSource.getRepository(Parcel).countBy({ label: 'outer' })).toBe(1);
      await dataSource.transaction((inner) => inner.save(Parcel.register('inner', 1)));
      throw new Error('undo both');
    });
    await expect(failing).rejects.toThrow('undo both');
    expect(await dataSource.getRepository(Parcel).count()).toBe(0);
    expect(await outbox.rows()).toEqual([]);
  });
});
