import { OutboxAdmin } from '@nest-outbox/outbox';
import { createOutboxHarness, type OutboxHarness, type TestDatabase } from './support/outbox-harness';
import { Parcel } from './support/parcel.fixtures';
import { RecordingTransport } from './support/recording.transport';
import { waitFor } from './support/wait-for';

/** Rows that cannot be decoded, planted among healthy ones on one real database: only they die. */
export function describeMalformedRows(database: TestDatabase): void {
  describe(`malformed rows on ${database}`, () => {
    let harness: OutboxHarness;

    beforeEach(async () => {
      harness = await createOutboxHarness(database, { relay: false });
    });

    afterEach(async () => {
      await harness?.close();
    });

    /** Overwrites one column of the row with this message id, as a hand-written UPDATE would. */
    async function corrupt(id: string, column: 'headers' | 'payload' | 'event_type', value: string): Promise<void> {
      const placeholder = database === 'postgres' ? ['$1', '$2'] : ['?', '?'];
      await harness.dataSource.query(`UPDATE outbox_messages SET ${column} = ${placeholder[0]} WHERE id = ${placeholder[1]}`, [value, id]);
    }

    it('dead-letters each undecodable row alone with its reason; its batch neighbours publish in order', async () => {
      const repository = harness.dataSource.getRepository(Parcel);
      const healthyA = Parcel.register('healthy-a', 1);
      healthyA.relabel('healthy-a-2');
      const badHeaders = Parcel.register('bad-headers', 2);
      const badPayload = Parcel.register('bad-payload', 3);
      const badHeaderValue = Parcel.register('bad-version', 4);
      const badShape = Parcel.register('bad-shape', 5);
      const badMetadata = Parcel.register('bad-metadata', 7);
      const healthyB = Parcel.register('healthy-b', 6);
      await repository.save([healthyA, badHeaders, badPayload, badHeaderValue, badShape, badMetadata, healthyB]);
      const rowOf = async (parcel: Parcel) => (await harness.rows()).find((row) => row.aggregateId === parcel.id)!;
      await corrupt((await rowOf(badHeaders)).id, 'headers', '{"traceparent": ');
      await corrupt((await rowOf(badPayload)).id, 'payload', '{not json');
      await corrupt((await rowOf(badHeaderValue)).id, 'headers', '{"tenant": 42}');
      await corrupt((await rowOf(badShape)).id, 'headers', '["not", "an", "object"]');
      await corrupt((await rowOf(badMetadata)).id, 'event_type', '');

      const transport = new RecordingTransport();
      const relay = harness.relay('relay', transport, { batchSize: 20, maxAttempts: 3 });
      await waitFor('the healthy rows to publish and the bad ones to die', async () => {
        await relay.trigger();
        const rows = await harness.rows();
        return rows.every((row) => row.status !== 'pending');
      });

      const rows = await harness.rows();
      const healthyIds = new Set([healthyA.id, healthyB.id]);
      expect(rows.filter((row) => healthyIds.has(row.aggregateId)).map((row) => row.status)).toEqual(['published', 'published', 'published']);
      expect(transport.delivered.map((m) => `${m.envelope.aggregateId}:${m.envelope.type}`)).toEqual(
        expect.arrayContaining([`${healthyA.id}:parcels.parcel-registered`, `${healthyA.id}:parcels.parcel-relabelled`, `${healthyB.id}:parcels.parcel-registered`]),
      );
      const aOrder = transport.delivered.filter((m) => m.envelope.aggregateId === healthyA.id).map((m) => m.envelope.type);
      expect(aOrder).toEqual(['parcels.parcel-registered', 'parcels.parcel-relabelled']);
      expect(transport.delivered).toHaveLength(3);

      const dead = await harness.module.get(OutboxAdmin).listDead();
      const reasons = Object.fromEntries(dead.map((row) => [row.aggregateId, row.lastError ?? '']));
      expect(Object.keys(reasons).sort()).toEqual([badHeaders.id, badPayload.id, badHeaderValue.id, badShape.id, badMetadata.id].sort());
      expect(reasons[badHeaders.id]).toMatch(/its headers are not JSON/);
      expect(reasons[badPayload.id]).toMatch(/its payload is not JSON/);
      expect(reasons[badHeaderValue.id]).toMatch(/its headers hold a value that is not a string \(header "tenant"\)/);
      expect(reasons[badShape.id]).toMatch(/its headers are not a JSON object/);
      expect(reasons[badMetadata.id]).toMatch(/its type is empty/);
      for (const row of dead) expect(row.attempts).toBe(1);
    });

    it('cuts a huge error text and keeps a bounded error history', async () => {
      const parcel = Parcel.register('huge-error', 1);
      await harness.dataSource.getRepository(Parcel).save(parcel);
      const huge = 'x'.repeat(1_000_000);
      const transport = { name: 'refusing', publish: async () => Promise.reject(new Error(huge)) };
      const relay = harness.relay('relay', transport, { maxAttempts: 25 });
      await waitFor('25 attempts to be recorded', async () => {
        await relay.trigger();
        const [row] = await harness.rows();
        return row.status === 'dead';
      }, 60_000);
      const [row] = await harness.rows();
      expect(row.attempts).toBe(25);
      expect(row.lastError!.length).toBeLessThan(2_100);
      expect(row.lastError).toMatch(/more characters cut\)$/);
      const history = JSON.parse(row.errorHistory!) as unknown[];
      expect(history).toHaveLength(20);
      expect(row.errorHistory!.length).toBeLessThan(20 * 2_200);
    });
  });
}
