import { OutboxAdmin, OutboxAdminError } from '@nest-outbox/outbox';
import { OutboxCleaner, type OutboxPartitioning } from '@nest-outbox/outbox/core';
import { createSqlOutboxMaintenanceStore } from '@nest-outbox/outbox/typeorm';
import { createOutboxHarness, type OutboxHarness, type TestDatabase } from './support/outbox-harness';
import { Parcel } from './support/parcel.fixtures';
import { RecordingTransport } from './support/recording.transport';
import { waitFor } from './support/wait-for';

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** Dead letters and cleanup on one real database; with `partitioning`, on a partitioned table (PostgreSQL). */
export function describeDeadLettersAndCleanup(database: TestDatabase, partitioning?: OutboxPartitioning): void {
  describe(`dead letters and cleanup on ${database}${partitioning ? `, table partitioned by ${partitioning.interval}` : ''}`, () => {
    let harness: OutboxHarness;

    beforeEach(async () => {
      harness = await createOutboxHarness(database, { relay: false, ...(partitioning ? { partitioning } : {}) });
    });

    afterEach(async () => {
      await harness?.close();
    });

    /** A parcel with two events whose first one fails for good; returns the rows' ids. */
    async function poisonFirstOf(label: string, transport: RecordingTransport, policy: 'hold' | 'skip' = 'hold') {
      const parcel = Parcel.register(label, 1);
      parcel.relabel(`${label}-2`);
      await harness.dataSource.getRepository(Parcel).save(parcel);
      const [poison, next] = (await harness.rows()).filter((row) => row.aggregateId === parcel.id);
      transport.failTimes(poison.id, 2);
      const relay = harness.relay('relay', transport, { maxAttempts: 2, deadLetterPolicy: policy });
      await waitFor('the first event to go dead', async () => {
        await relay.trigger();
        return (await harness.rows()).find((row) => row.id === poison.id)?.status === 'dead';
      });
      return { parcel, poison, next, relay };
    }

    it('lists a dead message with its error history, requeues it, and the held message follows in order', async () => {
      const transport = new RecordingTransport();
      const { parcel, poison, next, relay } = await poisonFirstOf('requeue', transport);
      await relay.trigger();
      expect(transport.delivered).toHaveLength(0);

      const admin = harness.module.get(OutboxAdmin);
      const [dead] = await admin.listDead();
      expect(dead).toMatchObject({ id: poison.id, aggregateId: parcel.id, attempts: 2, lastError: `refused ${poison.id}` });
      expect(dead.errors.map((entry) => entry.error)).toEqual([`refused ${poison.id}`, `refused ${poison.id}`]);

      await admin.requeue(poison.id);
      await waitFor('both events after the requeue', async () => {
        await relay.trigger();
        return transport.delivered.length === 2;
      });
      expect(transport.delivered.map((m) => m.envelope.id)).toEqual([poison.id, next.id]);
      expect(await admin.listDead()).toEqual([]);
    });

    it('refuses a malformed page cursor with an OutboxAdminError, not a database error', async () => {
      const admin = harness.module.get(OutboxAdmin);
      await expect(admin.listDead({ after: 'abc' })).rejects.toThrow(OutboxAdminError);
      await expect(admin.listDead({ after: 'abc' })).rejects.toThrow('option "after" must be a row position (digits only), got "abc"');
      await expect(admin.listDead({ limit: 0 })).rejects.toThrow('option "limit" must be a positive integer');
    });

    it('discards a dead message and releases the messages held behind it', async () => {
      const transport = new RecordingTransport();
      const { poison, next, relay } = await poisonFirstOf('discard', transport);
      await harness.module.get(OutboxAdmin).discard(poison.id);
      await waitFor('the held event', async () => {
        await relay.trigger();
        return transport.delivered.length === 1;
      });
      expect(transport.delivered[0].envelope.id).toBe(next.id);
      expect((await harness.rows()).find((row) => row.id === poison.id)?.status).toBe('discarded');
    });

    it('with the skip policy, later messages do not wait for a dead one', async () => {
      const transport = new RecordingTransport();
      const { next, relay } = await poisonFirstOf('skip', transport, 'skip');
      await waitFor('the next event', async () => {
        await relay.trigger();
        return transport.delivered.some((m) => m.envelope.id === next.id);
      });
    });

    it('refuses to requeue or discard what does not exist or is not dead, and changes nothing', async () => {
      await harness.dataSource.getRepository(Parcel).save(Parcel.register('alive', 1));
      const [pending] = await harness.rows();
      const admin = harness.module.get(OutboxAdmin);
      await expect(admin.requeue('01900000-0000-7000-8000-000000000000')).rejects.toThrow(/does not exist/);
      await expect(admin.requeue(pending.id)).rejects.toThrow(new RegExp(`${pending.id} is pending, not dead: only dead messages can be requeued`));
      await expect(admin.discard('x; drop table outbox_messages')).rejects.toMatchObject({ reason: 'invalid' });
      await expect(admin.discard(pending.id)).rejects.toBeInstanceOf(OutboxAdminError);
      expect(await harness.rows()).toEqual([expect.objectContaining({ id: pending.id, status: 'pending', attempts: 0 })]);
    });

    it('deletes rows as they are published in delete-on-publish mode, keeping order and failures', async () => {
      const parcel = Parcel.register('ephemeral', 1);
      parcel.relabel('ephemeral-2');
      await harness.dataSource.getRepository(Parcel).save(parcel);
      const [first] = await harness.rows();
      const transport = new RecordingTransport();
      transport.failTimes(first.id, 1);
      const relay = harness.relay('relay', transport, { deleteOnPublish: true });
      await waitFor('both events', async () => {
        await relay.trigger();
        return transport.delivered.length === 2;
      });
      expect(transport.delivered.map((m) => m.envelope.type)).toEqual(['parcels.parcel-registered', 'parcels.parcel-relabelled']);
      expect(await harness.rows()).toEqual([]);
    });

    // A partitioned table leaves rows of a partition within retention to the partition's drop
    // (test/partitioned-outbox.postgres.e2e-spec.ts), so this row-by-row case is the plain table's.
    if (!partitioning) {
      it('cleans a large backlog of old rows in small batches while new events keep flowing', async () => {
        const backlog = 3_000;
        await harness.dataSource.transaction((manager) =>
          harness.publisher.add(
            manager,
            Array.from({ length: backlog }, (_, i) => ({ type: 'old.event', aggregateType: 'old', aggregateId: `old-${i}`, payload: { i }, topic: 'old' })),
          ),
        );
        const past = {
          postgres: `now() - interval '30 days'`,
          mariadb: `NOW(3) - INTERVAL 30 DAY`,
          sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now', '-30 days')`,
        }[database];
        await harness.dataSource.query(`UPDATE outbox_messages SET status = 'published', published_at = ${past}`);

        const cleaner = new OutboxCleaner(
          createSqlOutboxMaintenanceStore(harness.dataSource, 'outbox_messages'),
          { publishedRetentionMs: 86_400_000, deadRetentionMs: null, batchSize: 200, maxBatchesPerRun: 100 },
          silent,
        );
        const transport = new RecordingTransport();
        const relay = harness.relay('relay', transport);
        const fresh = Array.from({ length: 20 }, (_, i) => Parcel.register(`fresh-${i}`, i));
        const cleaning = cleaner.run();
        for (const parcel of fresh) {
          await harness.dataSource.getRepository(Parcel).save(parcel);
          await relay.trigger();
        }
        expect(await cleaning).toEqual({ published: backlog, dead: 0 });
        await waitFor('the fresh events', async () => {
          await relay.trigger();
          return transport.delivered.length === fresh.length;
        });
        const rows = await harness.rows();
        expect(rows).toHaveLength(fresh.length);
        expect(rows.every((row) => row.eventType === 'parcels.parcel-registered' && row.status === 'published')).toBe(true);
        expect(await cleaner.run()).toEqual({ published: 0, dead: 0 });
      });
    }
  });
}
