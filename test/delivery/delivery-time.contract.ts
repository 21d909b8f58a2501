import { randomUUID } from 'node:crypto';
import { OutboxNonRetryableError, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutboxRelay, OutgoingMessage } from '@nest-outbox/outbox/core';
import { createOutboxHarness, type OutboxHarness, type TestDatabase } from '../support/outbox-harness';
import { Parcel, ParcelRegistered } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';

const DELAY_MS = 1_500;
// Database and test share the machine's clock; timestamps have millisecond resolution.
const TOLERANCE_MS = 50;

class TimedTransport implements OutboxTransport {
  readonly name = 'timed';
  readonly delivered: Array<{ message: OutgoingMessage; at: number }> = [];

  async publish(message: OutgoingMessage): Promise<void> {
    if ((message.envelope.payload as { poison?: boolean }).poison) throw new OutboxNonRetryableError(`schema rejected ${message.envelope.id}`);
    this.delivered.push({ message, at: Date.now() });
  }

  ids(): string[] {
    return this.delivered.map((entry) => entry.message.envelope.id);
  }
}

/**
 * A relay's first claim waits for its look at the table's statistics (on PostgreSQL an ANALYZE of
 * the new table, a commit to flush on a busy machine): done before the clock of a delay starts, so
 * that the next claim comes well within the delay.
 */
async function firstClaimDone(relay: OutboxRelay): Promise<void> {
  expect((await relay.publishBatch()).claimed).toBe(0);
}

/** Delayed messages and failures that must not be retried, on one real database. */
export function describeDeliveryTime(database: TestDatabase): void {
  describe(`delayed and non-retryable messages on ${database}`, () => {
    let harness: OutboxHarness;
    let relay: OutboxRelay | undefined;
    beforeEach(async () => (harness = await createOutboxHarness(database, { relay: false, defaultTopic: 'billing' })));
    afterEach(async () => {
      await relay?.stop(1_000);
      await harness?.close();
    });

    it('publishes a delayed message not before its time and soon after; later events of its aggregate wait behind it', async () => {
      const transport = new TimedTransport();
      relay = harness.relay('delay-relay', transport);
      await firstClaimDone(relay);
      const invoice = randomUUID();
      const started = Date.now();
      const [delayed, follower, other] = await harness.dataSource.transaction(async (manager) => [
        ...(await harness.publisher.add(manager, { type: 'billing.reminder', aggregateType: 'invoice', aggregateId: invoice, payload: {}, delayMs: DELAY_MS })),
        ...(await harness.publisher.add(manager, { type: 'billing.invoice-paid', aggregateType: 'invoice', aggregateId: invoice, payload: {} })),
        ...(await harness.publisher.add(manager, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: randomUUID(), payload: {} })),
      ]);
      await relay.trigger();
      expect(transport.ids()).toEqual([other]);

      const drain = relay;
      await waitFor('the delayed message and its follower', async () => (await drain.trigger(), transport.ids().includes(follower)), DELAY_MS + 15_000);
      expect(transport.ids()).toEqual([other, delayed, follower]);
      const delayedAt = transport.delivered[1].at;
      expect(delayedAt - started).toBeGreaterThanOrEqual(DELAY_MS - TOLERANCE_MS);
    });

    it('holds an event recorded with deliverAt until then, and the events recorded after it', async () => {
      const transport = new TimedTransport();
      relay = harness.relay('deliver-at-relay', transport);
      await firstClaimDone(relay);
      const parcel = Parcel.register('late', 100);
      const started = Date.now();
      parcel.recordEvent(new ParcelRegistered(parcel.id, 200), { deliverAt: new Date(started + DELAY_MS) });
      parcel.recordEvent(new ParcelRegistered(parcel.id, 300));
      await harness.dataSource.transaction((manager) => manager.save(parcel));
      const weights = () => transport.delivered.map((entry) => (entry.message.envelope.payload as { weightGrams: number }).weightGrams);
      await relay.trigger();
      expect(weights()).toEqual([100]);
      const drain = relay;
      await waitFor('the events held by deliverAt', async () => (await drain.trigger(), transport.delivered.length === 3), DELAY_MS + 15_000);
      expect(weights()).toEqual([100, 200, 300]);
      expect(transport.delivered[1].at - started).toBeGreaterThanOrEqual(DELAY_MS - TOLERANCE_MS);
    });

    it('rejects a negative delay naming the event and option, and commits nothing of the transaction', async () => {
      const parcel = Parcel.register('never', 10);
      await expect(
        harness.dataSource.transaction(async (manager) => {
          await manager.save(parcel);
          await harness.publisher.add(manager, { type: 'billing.too-early', aggregateType: 'invoice', aggregateId: 'i-1', payload: {}, delayMs: -5 });
        }),
      ).rejects.toThrow(/Event "billing\.too-early" cannot be written to the outbox: "delayMs" must be a number of milliseconds, 0 or more, got -5/);
      expect(await harness.rows()).toHaveLength(0);
      expect(await harness.dataSource.getRepository(Parcel).count()).toBe(0);
    });

    it('sends a row that failed with OutboxNonRetryableError to dead after one attempt, keeping the error', async () => {
      const transport = new TimedTransport();
      relay = harness.relay('poison-relay', transport, { maxAttempts: 10 });
      const [poison] = await harness.dataSource.transaction((manager) =>
        harness.publisher.add(manager, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: 'i-2', payload: { poison: true } }),
      );
      expect(await relay.publishBatch()).toMatchObject({ claimed: 1, dead: 1, retried: 0 });
      const [row] = await harness.rows();
      expect(row).toMatchObject({ id: poison, status: 'dead', attempts: 1, lastError: `schema rejected ${poison}` });
      expect(JSON.parse(row.errorHistory ?? '[]')).toHaveLength(1);
    });
  });
}
