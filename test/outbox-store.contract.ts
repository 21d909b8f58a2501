import type { OutboxRelay } from '@nest-outbox/outbox/core';
import { OutboxWriteError } from '@nest-outbox/outbox';
import { describeOutboxStoreContract, getRecordedEvents } from '@nest-outbox/outbox/testing';
import { createOutboxHarness, type OutboxHarness, type TestDatabase } from './support/outbox-harness';
import { Parcel, ParcelRegistered, Shipment } from './support/parcel.fixtures';
import { RecordingTransport } from './support/recording.transport';
import { sqlStoreSubject } from './support/sql-store.subject';
import { waitFor } from './support/wait-for';

/** The promises of the outbox, on one real database. Run by one spec file per database. */
export function describeOutboxContract(database: TestDatabase): void {
  // The store port's promises (claims, ordering rule, retries, fencing) are the exported suite's,
  // as users run it on their own stores; the tests below go through the module and the relay.
  describeOutboxStoreContract(sqlStoreSubject(database));

  describe(`outbox on ${database}`, () => {
    let harness: OutboxHarness;

    beforeEach(async () => {
      harness = await createOutboxHarness(database, { relay: false });
    });

    afterEach(async () => {
      await harness?.close();
    });

    async function drainUntil(relay: OutboxRelay, done: () => boolean, what: string): Promise<void> {
      await waitFor(what, async () => {
        await relay.trigger();
        return done();
      });
    }

    describe('writing', () => {
      it('writes one row per recorded event in the transaction that saves the aggregate', async () => {
        const parcel = Parcel.register('fragile', 1200);
        parcel.relabel('very fragile');
        await harness.dataSource.getRepository(Parcel).save(parcel);

        const rows = await harness.rows();
        expect(rows.map((row) => [row.eventType, row.eventVersion, row.aggregateType, row.aggregateId, row.destination, row.status])).toEqual([
          ['parcels.parcel-registered', 1, 'parcel', parcel.id, 'parcels', 'pending'],
          ['parcels.parcel-relabelled', 2, 'parcel', parcel.id, 'parcels', 'pending'],
        ]);
        expect(JSON.parse(rows[0].payload)).toEqual({ parcelId: parcel.id, weightGrams: 1200 });
        expect(rows[0].id).toMatch(/^[0-9a-f-]{36}$/);
        expect(getRecordedEvents(parcel)).toHaveLength(0);
      });

      it('captures updates, soft removals and removals, and aggregates saved by cascade', async () => {
        const repository = harness.dataSource.getRepository(Parcel);
        const parcel = Parcel.register('a', 10);
        await repository.save(parcel);
        parcel.relabel('b');
        await repository.save(parcel);
        parcel.discard();
        await repository.softRemove(parcel);
        const doomed = Parcel.register('c', 1);
        const doomedId = doomed.id;
        await repository.save(doomed);
        doomed.discard();
        await repository.remove(doomed);

        const shipment = new Shipment();
        shipment.parcels = [Parcel.register('x', 1), Parcel.register('y', 2)];
        await harness.dataSource.getRepository(Shipment).save(shipment);

        const types = (await harness.rows()).map((row) => `${row.eventType}@${row.aggregateId}`);
        expect(types).toEqual([
          `parcels.parcel-registered@${parcel.id}`,
          `parcels.parcel-relabelled@${parcel.id}`,
          `parcels.parcel-discarded@${parcel.id}`,
          `parcels.parcel-registered@${doomedId}`,
          `parcels.parcel-discarded@${doomedId}`,
          ...shipment.parcels.map((p) => `parcels.parcel-registered@${p.id}`),
        ]);
      });

      it('leaves no row after a rollback, and the aggregate keeps its events for the next save', async () => {
        const parcel = Parcel.register('rollback', 5);
        await expect(
          harness.dataSource.transaction(async (manager) => {
            await manager.save(parcel);
            throw new Error('business rule failed');
          }),
        ).rejects.toThrow('business rule failed');
        expect(await harness.rows()).toHaveLength(0);
        expect(await harness.dataSource.getRepository(Parcel).count()).toBe(0);
        expect(getRecordedEvents(parcel)).toHaveLength(1);

        await harness.dataSource.getRepository(Parcel).save(parcel);
        expect((await harness.rows()).map((row) => row.aggregateId)).toEqual([parcel.id]);
      });

      it('keeps the events of a rolled-back savepoint while the outer transaction commits', async () => {
        const parcel = Parcel.register('savepoint', 5);
        const queryRunner = harness.dataSource.createQueryRunner();
        try {
          await queryRunner.startTransaction();
          await queryRunner.startTransaction();
          await queryRunner.manager.save(parcel);
          await queryRunner.rollbackTransaction();
          await queryRunner.commitTransaction();
        } finally {
          await queryRunner.release();
        }
        expect(await harness.rows()).toHaveLength(0);
        expect(getRecordedEvents(parcel)).toHaveLength(1);
      });

      it('rolls back the whole transaction when a payload cannot be serialized, naming the event type', async () => {
        const parcel = Parcel.register('bigint', 1);
        (parcel as unknown as { recordEvent(event: object): void }).recordEvent(Object.assign(new ParcelRegistered(parcel.id, 1), { huge: 10n }));
        const saving = harness.dataSource.getRepository(Parcel).save(parcel);
        await expect(saving).rejects.toThrow(OutboxWriteError);
        await expect(saving).rejects.toThrow(/"parcels.parcel-registered"/);
        expect(await harness.dataSource.getRepository(Parcel).count()).toBe(0);
        expect(await harness.rows()).toHaveLength(0);
      });

      it('refuses to save an aggregate with events outside a transaction, before anything is written', async () => {
        const parcel = Parcel.register('no-tx', 1);
        await expect(harness.dataSource.getRepository(Parcel).save(parcel, { transaction: false })).rejects.toThrow(/outside a transaction/);
        expect(await harness.dataSource.getRepository(Parcel).count()).toBe(0);
      });

      it('adds messages through the explicit API inside the caller’s transaction', async () => {
        const input = { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: 'inv-1', payload: { amount: '12.50' }, topic: 'billing', correlationId: 'corr-1' };
        const ids = await harness.dataSource.transaction((manager) => harness.publisher.add(manager, input));
        await expect(
          harness.dataSource.transaction(async (manager) => {
            await harness.publisher.add(manager, { ...input, aggregateId: 'inv-2' });
            throw new Error('abort');
          }),
        ).rejects.toThrow('abort');
        await expect(harness.publisher.add(harness.dataSource.manager, input)).rejects.toThrow(/inside a transaction/);

        const rows = await harness.rows();
        expect(rows.map((row) => [row.id, row.aggregateId, row.destination, row.correlationId])).toEqual([[ids[0], 'inv-1', 'billing', 'corr-1']]);
      });
    });

    describe('relaying', () => {
      it('two relays in parallel publish every row exactly once, each aggregate in order', async () => {
        const parcels = Array.from({ length: 12 }, (_, i) => Parcel.register(`p${i}`, i));
        for (const parcel of parcels) for (let n = 0; n < 4; n++) parcel.relabel(`p-${n}`);
        await harness.dataSource.getRepository(Parcel).save(parcels);
        const total = parcels.length * 5;

        const transport = new RecordingTransport();
        const [a, b] = [harness.relay('relay-a', transport, { batchSize: 4 }), harness.relay('relay-b', transport, { batchSize: 4 })];
        await waitFor('all rows published', async () => {
          await Promise.all([a.trigger(), b.trigger()]);
          return transport.delivered.length >= total;
        });

        const ids = transport.delivered.map((message) => message.envelope.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toHaveLength(total);
        const rows = await harness.rows();
        expect(rows.every((row) => row.status === 'published')).toBe(true);
        for (const parcel of parcels) {
          const expected = rows.filter((row) => row.aggregateId === parcel.id).map((row) => row.id);
          expect(transport.delivered.filter((m) => m.key === parcel.id).map((m) => m.envelope.id)).toEqual(expected);
        }
      });

      it('reclaims the rows of a relay whose lease expired', async () => {
        await harness.dataSource.getRepository(Parcel).save(Parcel.register('lease', 1));
        const transport = new RecordingTransport();
        const crashed = harness.relay('crashed', transport, { leaseMs: 300, publishTimeoutMs: 100 });
        const [claimed] = await (crashed as unknown as { config: { store: { claim: Function } } }).config.store.claim({ owner: 'crashed', token: 'crashed-claim', limit: 10, leaseMs: 300 });
        expect(claimed).toBeDefined();

        const successor = harness.relay('successor', transport);
        expect((await successor.publishBatch()).claimed).toBe(0);
        await waitFor('the expired lease to be reclaimed', async () => (await successor.publishBatch()).published === 1);
        const [row] = await harness.rows();
        expect(row).toMatchObject({ status: 'published', attempts: 2 });
      });

      it('keeps per-aggregate order when an early event fails and is retried, while other aggregates flow', async () => {
        const slow = Parcel.register('slow', 1);
        slow.relabel('second');
        slow.relabel('third');
        const other = Parcel.register('other', 2);
        await harness.dataSource.getRepository(Parcel).save([slow, other]);
        const rows = await harness.rows();
        const slowIds = rows.filter((row) => row.aggregateId === slow.id).map((row) => row.id);

        const transport = new RecordingTransport();
        transport.failTimes(slowIds[0], 2);
        const relay = harness.relay('relay', transport);
        await relay.trigger();
        expect(transport.delivered.map((m) => m.key)).toEqual([other.id]);

        await drainUntil(relay, () => transport.delivered.length === 4, 'the failed event to be retried and the rest to follow');
        expect(transport.delivered.filter((m) => m.key === slow.id).map((m) => m.envelope.id)).toEqual(slowIds);
        const [first] = await harness.rows();
        expect(first).toMatchObject({ status: 'published', attempts: 3, lastError: `refused ${slowIds[0]}` });
      });

      it('records every failure of a batch with its own error and retry time, and a dead row in the same batch', async () => {
        const parcels = [Parcel.register('f1', 1), Parcel.register('f2', 2), Parcel.register('f3', 3)];
        await harness.dataSource.getRepository(Parcel).save(parcels);
        const rows = await harness.rows();
        const transport = new RecordingTransport();
        rows.forEach((row) => transport.failTimes(row.id, 1));
        const first = harness.relay('relay', transport, { maxAttempts: 5 });
        const attempt = await first.publishBatch();
        // Stopped so that its own wake-up for the retries does not take the rows from the relay below.
        await first.stop(0);
        expect(attempt).toEqual({ claimed: 3, published: 0, retried: 3, dead: 0 });
        const failed = await harness.rows();
        expect(failed.map((row) => [row.status, row.attempts, row.lastError, row.leaseOwner])).toEqual(rows.map((row) => ['pending', 1, `refused ${row.id}`, null]));
        expect(failed.every((row) => row.nextAttemptAt !== null)).toBe(true);

        rows.forEach((row) => transport.failTimes(row.id, 1));
        // The three retry times are set by separate statements on some databases, so they may come due in different claims.
        const retrying = harness.relay('relay', transport, { maxAttempts: 2 });
        let claimed = 0;
        await waitFor('the retry times to come', async () => (claimed += (await retrying.publishBatch()).claimed) === 3);
        await retrying.stop(0);
        expect((await harness.rows()).map((row) => row.status)).toEqual(['dead', 'dead', 'dead']);
      });

      describe('runs of one aggregate in a batch', () => {
        async function busyParcel(events: number): Promise<Parcel> {
          const parcel = Parcel.register('busy', 1);
          for (let n = 1; n < events; n++) parcel.relabel(`busy-${n}`);
          await harness.dataSource.getRepository(Parcel).save(parcel);
          return parcel;
        }

        it('publishes a run in one batch, in order, and gives back the rows behind a failure unsent and uncharged', async () => {
          const busy = await busyParcel(5);
          const other = Parcel.register('other', 2);
          await harness.dataSource.getRepository(Parcel).save(other);
          const busyIds = (await harness.rows()).filter((row) => row.aggregateId === busy.id).map((row) => row.id);
          const transport = new RecordingTransport();
          transport.failTimes(busyIds[2], 1);
          const relay = harness.relay('relay', transport, { batchSize: 10 });

          expect(await relay.publishBatch()).toEqual({ claimed: 6, published: 3, retried: 1, dead: 0 });
          await relay.stop(0);
          expect(transport.delivered.filter((m) => m.key === busy.id).map((m) => m.envelope.id)).toEqual(busyIds.slice(0, 2));
          expect(transport.delivered.filter((m) => m.key === other.id)).toHaveLength(1);
          const busyRows = (await harness.rows()).filter((row) => row.aggregateId === busy.id);
          expect(busyRows.map((row) => [row.status, row.attempts, row.leaseToken])).toEqual([
            ['published', 1, null],
            ['published', 1, null],
            ['pending', 1, null],
            ['pending', 0, null],
            ['pending', 0, null],
          ]);

          const retrying = harness.relay('retrying', transport, { batchSize: 10 });
          await drainUntil(retrying, () => transport.delivered.length === 6, 'the retry and the rows behind it');
          expect(transport.delivered.filter((m) => m.key === busy.id).map((m) => m.envelope.id)).toEqual(busyIds);
        });
      });

      it('turns a row dead after max attempts with the broker’s error, and holds that aggregate', async () => {
        const poison = Parcel.register('poison', 1);
        poison.relabel('behind the poison');
        await harness.dataSource.getRepository(Parcel).save(poison);
        const [first] = await harness.rows();
        const transport = new RecordingTransport();
        transport.failTimes(first.id, 100);
        const relay = harness.relay('relay', transport, { maxAttempts: 2 });
        await waitFor('the row to go dead', async () => {
          await relay.trigger();
          return (await harness.rows())[0].status === 'dead';
        });
        const [dead, held] = await harness.rows();
        expect(dead).toMatchObject({ status: 'dead', attempts: 2, lastError: `refused ${first.id}` });
        expect(held.status).toBe('pending');
        expect(transport.delivered).toHaveLength(0);
      });
    });
  });
}
