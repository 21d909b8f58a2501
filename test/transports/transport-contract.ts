import { EventPattern } from '@nestjs/microservices';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { OutboxConfigurationError, type OutboxEnvelope, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { Parcel, ParcelRelabelled } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { type ReceivedMetadata, type TransportSpec } from './transport-spec';
import { CapturingLogger, Deliveries, type OutboxRow, sqliteTime, envelopeHeaders, type Harness, newRun, startProducer, Prober, probeUntilReceived, settleDeliveries } from './transport-harness';

export { serviceOutage, stringHeaders, type BrokerControl, type CustomProducer, type ReceivedMetadata, type TransportRun, type TransportSpec } from './transport-spec';

/**
 * The conformance suite: the outbox publishes through `spec`'s Nest client to a real broker
 * and a Nest `@EventPattern` consumer receives every event with its envelope and metadata,
 * in order per aggregate, also across a broker outage.
 */
export function describeTransportContract(spec: TransportSpec): void {
  describe(`outbox over ${spec.name} (real broker, Nest client → @EventPattern consumer)`, () => {
    let harness: Harness | undefined;

    beforeAll(() => {
      for (const service of spec.services) requireService(service);
    });

    async function start(): Promise<Harness> {
      const deliveries = new Deliveries();
      const logger = new CapturingLogger();
      const run = await newRun(spec, deliveries, logger);
      await run.startConsumer();
      // Pub/sub drops what arrives before the subscription: start publishing once it is in place.
      if (spec.outage.probe) await probeUntilReceived(spec, run, deliveries);
      let producer: Awaited<ReturnType<typeof startProducer>>;
      try {
        producer = await startProducer(spec, run, logger);
      } catch (error) {
        await run.stopConsumer();
        throw error;
      }
      const dataSource = producer.module.get(DataSource);
      harness = {
        run,
        deliveries,
        logger,
        app: producer.module,
        client: producer.client,
        dataSource,
        cleanups: [],
        rows: () => dataSource.query(`SELECT * FROM outbox_messages ORDER BY position`),
        close: async () => {
          try {
            for (const cleanup of harness?.cleanups ?? []) await cleanup().catch(() => undefined);
            await producer.close();
          } finally {
            await run.stopConsumer();
          }
        },
      };
      return harness;
    }

    afterEach(async () => {
      const current = harness;
      harness = undefined;
      await current?.close();
    });

    const save = (h: Harness, ...parcels: Parcel[]) => h.dataSource.transaction((manager) => manager.save(parcels));

    const expectEnvelope = (h: Harness, delivery: { envelope: OutboxEnvelope; metadata: ReceivedMetadata }, row: OutboxRow, payload: unknown) => {
      const { envelope, metadata } = delivery;
      expect(envelope).toEqual({
        id: row.id,
        type: row.event_type,
        version: row.event_version,
        aggregateType: 'parcel',
        aggregateId: row.aggregate_id,
        occurredAt: row.occurred_at,
        // Absent metadata is left out of the JSON body (undefined here), never sent as null.
        correlationId: row.correlation_id ?? undefined,
        causationId: undefined,
        tenantId: undefined,
        headers: {},
        payload,
      });
      if (spec.metadata.headers === 'envelope') {
        expect(metadata.key).toBe(row.aggregate_id);
        expect(metadata.headers).toEqual(envelopeHeaders(envelope));
      } else {
        // Nothing but the body reaches the consumer: the envelope has to carry everything.
        expect(metadata.key).toBeUndefined();
        expect(metadata.headers).toEqual({});
      }
      expect(metadata.properties).toEqual(spec.metadata.expectedProperties(envelope, h.run));
    };

    it('delivers saved events with the envelope intact and the key/metadata mapped as far as the broker offers', async () => {
      const h = await start();
      const parcel = Parcel.register('first', 1_250);
      const correlationId = `corr-${h.run.suffix}`;
      parcel.recordEvent(new ParcelRelabelled(parcel.id, 'second'), { correlationId });
      await save(h, parcel);

      const received = await waitFor('both events at the consumer', () => h.deliveries.forAggregate(parcel.id).length >= 2 && h.deliveries.forAggregate(parcel.id), 20_000);
      const rows = await waitFor('both rows published', async () => {
        const all = await h.rows();
        return all.length === 2 && all.every((row) => row.status === 'published') && all;
      });
      expect(received).toHaveLength(2);
      expectEnvelope(h, received[0], rows[0], { parcelId: parcel.id, weightGrams: 1_250 });
      expectEnvelope(h, received[1], rows[1], { parcelId: parcel.id, label: 'second' });
      expect(received.map((delivery) => 'correlationId' in delivery.envelope)).toEqual([false, true]);
      expect(received[1].envelope.correlationId).toBe(correlationId);
      expect(rows.map((row) => [row.attempts, row.last_error])).toEqual([
        [1, null],
        [1, null],
      ]);
    });

    it('publishes the events of one aggregate in the order they happened, across several saves', async () => {
      const h = await start();
      const parcel = Parcel.register('v0', 10);
      const other = Parcel.register('other', 20);
      for (let version = 1; version <= 4; version++) parcel.relabel(`v${version}`);
      await save(h, parcel, other);
      parcel.relabel('v5');
      parcel.discard();
      await save(h, parcel);
      parcel.relabel('v6');
      await save(h, parcel);

      const expected = ['registered:v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'discarded', 'v6'];
      const describeEvent = (envelope: OutboxEnvelope) => {
        const payload = envelope.payload as { label?: string };
        if (envelope.type === 'parcels.parcel-registered') return 'registered:v0';
        if (envelope.type === 'parcels.parcel-discarded') return 'discarded';
        return payload.label ?? '?';
      };
      const received = await waitFor(`${expected.length} events of the parcel`, () => h.deliveries.forAggregate(parcel.id).length >= expected.length && h.deliveries.forAggregate(parcel.id), 30_000);
      expect(received.map((delivery) => describeEvent(delivery.envelope))).toEqual(expected);
      const rows = (await h.rows()).filter((row) => row.aggregate_id === parcel.id);
      expect(received.map((delivery) => delivery.envelope.id)).toEqual(rows.map((row) => row.id));
      await waitFor('the other parcel’s event', () => h.deliveries.forAggregate(other.id).length === 1);
      expect(h.deliveries.duplicates()).toBe(0);
    });

    it('keeps events pending while the broker is down and delivers them once it is back, without restarting the app or the relay', async () => {
      const h = await start();
      const broker = spec.outage.broker(h.run);
      const before = Parcel.register('before', 1);
      await save(h, before);
      await waitFor('the event saved before the outage', () => h.deliveries.forAggregate(before.id).length === 1, 20_000);

      const during = [Parcel.register('during-a', 2), Parcel.register('during-b', 3), Parcel.register('during-c', 4)];
      for (const parcel of during) parcel.relabel(`${parcel.label}-relabelled`);
      const stoppedAt = Date.now();
      await broker.stop();
      let restartedAt: number;
      let restartRequestedAt: number;
      let prober: Prober | undefined;
      try {
        if (spec.acknowledgement === 'none' && h.client) {
          // Without an acknowledgement, what the client writes before it has noticed the lost
          // connection counts as published and is gone (on TCP the write to the closed socket
          // only logs EPIPE). The outage proper starts once the client knows.
          await firstValueFrom(h.client.status.pipe(filter((status) => status !== 'connected'), timeout(20_000)));
        }
        // Saving does not depend on the broker.
        await save(h, during[0]);
        await save(h, during[1], during[2]);
        const duringIds = new Set(during.map((parcel) => parcel.id));
        const failed = await waitFor(
          'a failed attempt recorded on each aggregate’s first row',
          async () => {
            const rows = (await h.rows()).filter((row) => duringIds.has(row.aggregate_id));
            const heads = during.map((parcel) => rows.find((row) => row.aggregate_id === parcel.id)!);
            return rows.length === 6 && heads.every((row) => row.attempts >= 1 && row.last_error !== null) && rows;
          },
          20_000,
        ).catch(async (error: Error) => {
          throw new Error(`${error.message}; rows: ${JSON.stringify(await h.rows(), ['event_type', 'status', 'attempts', 'last_error'])}`);
        });
        for (const row of failed) expect(row.status).toBe('pending');
        for (const row of failed.filter((row) => row.last_error !== null)) expect(row.last_error).toMatch(spec.outage.lastError);
        // The later event of each aggregate waits behind its first one, untried: a claim may take it
        // with its head, but hands it back unsent and uncharged when the head fails.
        const behind = failed.filter((row) => row.event_type === 'parcels.parcel-relabelled');
        expect(behind.map((row) => [row.last_error, row.attempts - (row.lease_token === null ? 0 : 1)])).toEqual([
          [null, 0],
          [null, 0],
          [null, 0],
        ]);
        expect(during.flatMap((parcel) => h.deliveries.forAggregate(parcel.id))).toEqual([]);
      } finally {
        let proberError: unknown;
        try {
          if (spec.outage.delivery === 'subscribed-only') {
            // Probing from the restart on tells when the consumer is subscribed again, however
            // soon the relay gets its rows out.
            prober = new Prober(spec, h.run, h.deliveries).start();
            h.cleanups.push(() => prober!.stop());
          }
        } catch (error) {
          proberError = error;
        }
        restartRequestedAt = Date.now();
        await broker.start();
        restartedAt = Date.now();
        if (proberError) throw proberError;
      }

      if (spec.outage.restartConsumer) {
        // See the spec: this Nest consumer does not resubscribe by itself after a broker restart.
        await h.run.stopConsumer();
        await h.run.startConsumer();
      }

      const rowsOfOutage = async () => {
        const ids = new Set(during.map((parcel) => parcel.id));
        return (await h.rows()).filter((row) => ids.has(row.aggregate_id));
      };
      const allPublished = await waitFor('every row of the outage to be published', async () => {
        const rows = await rowsOfOutage();
        return rows.every((row) => row.status === 'published') && rows;
      }, 60_000);
      const publishedAt = Date.now();
      const maxAttempts = Math.max(...allPublished.map((row) => row.attempts));

      const consumerBackAt = prober ? await prober.arrival(30_000) : restartedAt;
      await prober?.stop();

      const lost = await settleDeliveries(h, allPublished, spec.outage.delivery === 'all' ? 30_000 : 3_000);
      if (spec.outage.delivery === 'all') {
        expect(lost).toEqual([]);
      } else {
        // Pub/sub keeps nothing for absent subscribers: only rows published before the consumer
        // was subscribed again may be missing. `published_at` is written just after the publish
        // (no acknowledgement to wait for); 500 ms of slack covers the settle and timer jitter.
        for (const row of lost) expect(sqliteTime(row.published_at!)).toBeLessThan(consumerBackAt + 500);
      }
      for (const row of allPublished.filter((row) => !lost.includes(row))) {
        const [first] = h.deliveries.of(row.id);
        expect(first.envelope).toMatchObject({ id: row.id, type: row.event_type, aggregateId: row.aggregate_id });
      }
      // Per-aggregate order survives the retries.
      for (const parcel of during) {
        const types = h.deliveries.forAggregate(parcel.id).map((delivery) => delivery.envelope.type);
        const firstSeen = types.filter((type, index) => types.indexOf(type) === index);
        if (!lost.some((row) => row.aggregate_id === parcel.id)) expect(firstSeen).toEqual(['parcels.parcel-registered', 'parcels.parcel-relabelled']);
      }

      // Once the consumer is back, nothing is lost on any transport.
      const after = Parcel.register('after', 5);
      await save(h, after);
      await waitFor('the event saved after the outage', () => h.deliveries.forAggregate(after.id).length >= 1, 20_000);

      const report = {
        transport: spec.name,
        outageMs: restartedAt - stoppedAt,
        // from the moment the restart was requested (the broker comes up before the script returns)
        restartMs: restartedAt - restartRequestedAt,
        allPublishedMs: publishedAt - restartRequestedAt,
        consumerBackMs: prober ? consumerBackAt - restartRequestedAt : undefined,
        maxAttempts,
        lastErrors: [...new Set(allPublished.map((row) => row.last_error))],
        delivered: allPublished.length - lost.length,
        lost: lost.length,
        duplicates: h.deliveries.duplicates(),
      };
      process.stdout.write(`[transport-contract] outage ${JSON.stringify(report)}\n`);
    });

    describe(`at startup (acknowledgement: ${spec.acknowledgement})`, () => {
      async function startOnly(extra: Partial<OutboxModuleOptions>) {
        const deliveries = new Deliveries();
        const logger = new CapturingLogger();
        const run = await newRun(spec, deliveries, logger);
        const outcome = await startProducer(spec, run, logger, extra).then(
          (producer) => ({ producer, error: undefined }),
          (error: unknown) => ({ producer: undefined, error }),
        );
        await outcome.producer?.close();
        return { ...outcome, logger };
      }

      if (spec.acknowledgement === 'none') {
        it(`warns that "${spec.name}" cannot confirm, naming it`, async () => {
          const { error, logger } = await startOnly({});
          expect(error).toBeUndefined();
          const warnings = logger.warnings('Outbox');
          expect(warnings).toEqual([expect.stringContaining(`Outbox transport "${spec.name}" cannot confirm that the broker has a message`)]);
          expect(warnings[0]).toContain('requireAcknowledgement: true');
        });

        it(`refuses to start with requireAcknowledgement: true, naming "${spec.name}"`, async () => {
          const { error, logger } = await startOnly({ requireAcknowledgement: true });
          expect(error).toBeInstanceOf(OutboxConfigurationError);
          expect((error as Error).message).toContain(`Outbox transport "${spec.name}" cannot confirm`);
          expect(logger.warnings('Outbox')).toEqual([]);
        });
      } else {
        it(`starts without an acknowledgement warning, also with requireAcknowledgement: true`, async () => {
          for (const extra of [{}, { requireAcknowledgement: true }]) {
            const { error, logger } = await startOnly(extra);
            expect(error).toBeUndefined();
            expect(logger.warnings('Outbox')).toEqual([]);
            expect(logger.entries.some((entry) => entry.context === 'Outbox' && entry.message.includes(`through ${spec.name}:`))).toBe(true);
          }
        });
      }
    });
  });
}
