import { Controller, Injectable } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Idempotent, OutboxInbox, type OutboxEnvelope } from '@nest-outbox/outbox';
import type { TestDatabase } from '../support/outbox-harness';
import { startInbox, type InboxDatabase, type InboxVariant } from './inbox.harness';

const envelope = (id: string): OutboxEnvelope => ({
  id,
  type: 'orders.order-placed',
  version: 1,
  aggregateType: 'order',
  aggregateId: 'o-1',
  occurredAt: new Date().toISOString(),
  headers: {},
  payload: { orderId: 'o-1' },
});

/** While true, the shipping handler writes its row and then fails (a warehouse outage). */
let warehouseDown = false;
/** The database of the app under test: handlers write through it into the inbox's transaction. */
let db: InboxDatabase;

@Controller()
class ShippingConsumer {
  constructor(private readonly inbox: OutboxInbox) {}

  @EventPattern('orders')
  @Idempotent('shipping.ship-order')
  async onOrder(@Payload() event: OutboxEnvelope): Promise<string> {
    await db.ship(this.inbox.manager<unknown>(), event.id);
    if (warehouseDown) throw new Error('warehouse unavailable');
    return 'shipped';
  }
}

@Injectable()
class CopyCatConsumer {
  @Idempotent('shipping.ship-order')
  async onOrder(): Promise<void> {}
}

async function start(database: TestDatabase, variant: InboxVariant, extra: { controllers?: any[]; providers?: any[] } = {}) {
  const started = await startInbox(database, variant, { maxAttempts: 3 }, { controllers: extra.controllers ?? [ShippingConsumer], providers: extra.providers ?? [] });
  return { ...started, inbox: started.module.get(OutboxInbox), consumer: started.module.get(ShippingConsumer) };
}

/** The inbox's behaviour on `database`, in TypeORM's transactions or (`variant: 'connection'`) the module's own, without TypeORM. */
export function describeInboxContract(database: TestDatabase, variant: InboxVariant = 'typeorm'): void {
  describe(`inbox on ${database}${variant === 'connection' ? ' with connection, without TypeORM' : ''}`, () => {
    let app: Awaited<ReturnType<typeof start>>;
    beforeAll(async () => {
      app = await start(database, variant);
      db = app;
    });
    afterAll(() => app?.close());

    it('runs a message once per consumer and skips its redelivery', async () => {
      const message = envelope('00000000-0000-7000-8000-000000000001');
      const first = await app.inbox.process(message, 'billing', (tx) => app.ship(tx, message.id).then(() => 'done'));
      const again = await app.inbox.process(message, 'billing', (tx) => app.ship(tx, message.id));
      const otherConsumer = await app.inbox.process(message.id, 'analytics', () => 'seen');
      expect(first).toEqual({ duplicate: false, result: 'done' });
      expect(again).toEqual({ duplicate: true });
      expect(otherConsumer).toEqual({ duplicate: false, result: 'seen' });
      expect(await app.shipments()).toBe(1);
    });

    it('runs concurrent deliveries of one message once', async () => {
      const message = envelope('00000000-0000-7000-8000-000000000002');
      const before = await app.shipments();
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, () =>
          app.inbox.process(message, 'billing', async (tx) => {
            await app.ship(tx, message.id);
            // Hold the transaction open a little so the others meet the uncommitted mark.
            await app.hold(tx);
            return 'ran';
          }),
        ),
      );
      expect(outcomes.filter((outcome) => !outcome.duplicate)).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.duplicate)).toHaveLength(5);
      expect((await app.shipments()) - before).toBe(1);
    });

    it("keeps the app's own transactions apart from deliveries that overlap them and fail", async () => {
      const [shipmentsBefore, marksBefore] = [await app.shipments(), await app.marks()];
      const messages = Array.from({ length: 5 }, (_, i) => envelope(`00000000-0000-7000-8000-0000000001${String(i).padStart(2, '0')}`));
      const deliveries = messages.map((message, i) =>
        app.inbox.process(message, 'overlap', async (tx) => {
          await app.ship(tx, message.id);
          // Let the app's transactions start while this one is open (SQLite: one shared connection).
          await new Promise((resolve) => setImmediate(resolve));
          throw new Error(`refused ${i}`);
        }),
      );
      const ownWork = Array.from({ length: 5 }, (_, i) => app.ownTransaction(`own-${i}-${shipmentsBefore}`));
      const outcomes = await Promise.allSettled([...deliveries, ...ownWork]);

      expect(outcomes.map((outcome) => outcome.status)).toEqual([...Array(5).fill('rejected'), ...Array(5).fill('fulfilled')]);
      // The app's five inserts committed; nothing of the failed deliveries did, and they left no mark.
      expect((await app.shipments()) - shipmentsBefore).toBe(5);
      expect((await app.marks()) - marksBefore).toBe(0);
    });

    it('rolls back the work and the mark together when the handler fails, so the retry runs it', async () => {
      const message = envelope('00000000-0000-7000-8000-000000000003');
      const before = await app.shipments();
      const marksBefore = await app.marks();
      await expect(
        app.inbox.process(message, 'billing', async (tx) => {
          await app.ship(tx, message.id);
          throw new Error('warehouse unavailable');
        }),
      ).rejects.toThrow('warehouse unavailable');
      expect(await app.shipments()).toBe(before);
      expect(await app.marks()).toBe(marksBefore);
      const retry = await app.inbox.process(message, 'billing', (tx) => app.ship(tx, message.id).then(() => 'ok'));
      expect(retry).toEqual({ duplicate: false, result: 'ok' });
      expect((await app.shipments()) - before).toBe(1);
    });

    it('prunes marks older than the retention and keeps recent ones', async () => {
      const old = envelope('00000000-0000-7000-8000-000000000004');
      await app.inbox.process(old, 'pruning', () => undefined);
      await app.inbox.process(envelope('00000000-0000-7000-8000-000000000005'), 'pruning', () => undefined);
      const backdate =
        database === 'postgres'
          ? `UPDATE "outbox_inbox" SET processed_at = now() - interval '2 minutes' WHERE message_id = $1`
          : database === 'mariadb'
            ? 'UPDATE `outbox_inbox` SET processed_at = UTC_TIMESTAMP(3) - INTERVAL 2 MINUTE WHERE message_id = ?'
            : `UPDATE "outbox_inbox" SET processed_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-120 seconds') WHERE message_id = ?`;
      await app.query(backdate, [old.id]);
      const marksBefore = await app.marks();
      expect(await app.inbox.pruneNow()).toBe(1);
      expect(await app.marks()).toBe(marksBefore - 1);
      // Pruned: a redelivery after the retention runs again (which is why retention must exceed the redelivery window).
      expect(await app.inbox.process(old, 'pruning', () => 'again')).toEqual({ duplicate: false, result: 'again' });
      expect(await app.inbox.process(envelope('00000000-0000-7000-8000-000000000005'), 'pruning', () => 'x')).toEqual({ duplicate: true });
    });

    it('makes an @Idempotent() handler run once and acknowledge the redelivery', async () => {
      const message = envelope('00000000-0000-7000-8000-000000000006');
      const before = await app.shipments();
      expect(await app.consumer.onOrder(message)).toBe('shipped');
      expect(await app.consumer.onOrder(message)).toBeUndefined();
      expect((await app.shipments()) - before).toBe(1);
      // Not an envelope: recorded and acknowledged (the handler returns), never run.
      await expect((app.consumer.onOrder as (value: unknown) => Promise<unknown>)({ orderId: 'no envelope' })).resolves.toBeUndefined();
      expect((await app.shipments()) - before).toBe(1);
      const [record] = (await app.inbox.poison!.list({ consumer: 'shipping.ship-order', limit: 10 })).filter((r) => r.raw.includes('no envelope'));
      expect(record).toMatchObject({ messageId: null, state: 'set-aside', attempts: 1, raw: '{"orderId":"no envelope"}' });
      expect(record.reason).toBe('not an outbox envelope: "id" is missing, expected a string');
    });

    it('sets aside deliveries that cannot be decoded, with their reason, and counts a redelivery on the same record', async () => {
      const nul = { ...envelope('00000000-0000-7000-8000-00000000000a'), id: 'abc\u0000def' };
      const outcome = await app.consumer.onOrder(nul);
      expect(outcome).toBeUndefined();
      const wrongTypes = { ...envelope('00000000-0000-7000-8000-00000000000b'), version: '1' };
      expect(await (app.consumer.onOrder as (value: unknown) => Promise<unknown>)(wrongTypes)).toBeUndefined();
      expect(await (app.consumer.onOrder as (value: unknown) => Promise<unknown>)('plain text')).toBeUndefined();
      expect(await (app.consumer.onOrder as (value: unknown) => Promise<unknown>)('plain text')).toBeUndefined();
      const direct = await app.inbox.process({ id: 'x\u0000y' }, 'billing', () => 'never');
      expect(direct.setAside?.reason).toBe('no valid message id: "id" contains a control character (x\\u0000y)');
      const records = await app.inbox.poison!.list({ consumer: 'shipping.ship-order', limit: 50 });
      const reasons = records.map((r) => r.reason);
      expect(reasons).toEqual(
        expect.arrayContaining([
          'no valid message id: "id" contains a control character (abc\\u0000def)',
          'not an outbox envelope: "version" is a string, expected a number',
          'not an outbox envelope: got a string',
        ]),
      );
      expect(records.find((r) => r.raw === '"plain text"')).toMatchObject({ attempts: 2, state: 'set-aside' });
      expect(records.find((r) => r.reason.includes('abc'))!.raw).toContain('abc\\u0000def');
    });

    it('counts a failing handler across redeliveries and sets it aside at maxAttempts; replay runs it and deletes the record', async () => {
      const message = envelope('00000000-0000-7000-8000-00000000000c');
      const before = await app.shipments();
      warehouseDown = true;
      try {
        await expect(app.consumer.onOrder(message)).rejects.toThrow('warehouse unavailable');
        await expect(app.consumer.onOrder(message)).rejects.toThrow('warehouse unavailable');
        expect(await app.inbox.poison!.get('shipping.ship-order', message.id)).toMatchObject({ state: 'failing', attempts: 2, messageId: message.id });
        // The third failure reaches maxAttempts: 3, so the handler returns and the broker would acknowledge.
        await expect(app.consumer.onOrder(message)).resolves.toBeUndefined();
        const record = await app.inbox.poison!.get('shipping.ship-order', message.id);
        expect(record).toMatchObject({ state: 'set-aside', attempts: 3, reason: 'handler failed: warehouse unavailable' });
        expect(JSON.parse(record.raw)).toEqual(message);
        // A redelivery of a set-aside message is a duplicate: not run, not counted.
        await expect(app.consumer.onOrder(message)).resolves.toBeUndefined();
        expect((await app.inbox.poison!.get('shipping.ship-order', message.id)).attempts).toBe(3);
        expect(await app.shipments()).toBe(before);
        // A replay while the cause persists counts one more attempt and keeps the record.
        await expect(app.inbox.poison!.replay('shipping.ship-order', message.id)).rejects.toThrow(/Replay of "shipping.ship-order" \/ ".*" failed: warehouse unavailable/);
        expect(await app.inbox.poison!.get('shipping.ship-order', message.id)).toMatchObject({ state: 'set-aside', attempts: 4 });
      } finally {
        warehouseDown = false;
      }
      // Two replays at once (two operators): the handler runs once, the other finds the record gone.
      const both = await Promise.allSettled([app.inbox.poison!.replay('shipping.ship-order', message.id), app.inbox.poison!.replay('shipping.ship-order', message.id)]);
      expect(both.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((both.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason.message).toMatch(/No poison record/);
      expect((await app.shipments()) - before).toBe(1);
      await expect(app.inbox.poison!.get('shipping.ship-order', message.id)).rejects.toThrow(/No poison record/);
      // Replayed once: the message is now handled, so a redelivery is a duplicate again.
      await expect(app.consumer.onOrder(message)).resolves.toBeUndefined();
      expect((await app.shipments()) - before).toBe(1);
    });

    it('forgets the failures of a message that succeeds before the limit', async () => {
      const message = envelope('00000000-0000-7000-8000-00000000000d');
      warehouseDown = true;
      await expect(app.consumer.onOrder(message)).rejects.toThrow('warehouse unavailable');
      warehouseDown = false;
      expect(await app.consumer.onOrder(message)).toBe('shipped');
      // Hidden at once (the message is marked handled), deleted by the next sweep.
      await expect(app.inbox.poison!.get('shipping.ship-order', message.id)).rejects.toThrow(/No poison record/);
      expect((await app.inbox.poison!.list({ state: 'failing', limit: 50 })).map((r) => r.key)).not.toContain(message.id);
      const store = app.poisonStore();
      // This one and the one of the rollback test above (failed once, then handled).
      expect(await store.sweep()).toBe(2);
      expect(await store.sweep()).toBe(0);
    });

    it('replays what the CLI asked for, refuses records that cannot be replayed, and deletes on request', async () => {
      const message = envelope('00000000-0000-7000-8000-00000000000e');
      warehouseDown = true;
      for (let i = 0; i < 3; i++) await app.consumer.onOrder(message).catch(() => undefined);
      warehouseDown = false;
      const store = app.poisonStore();
      expect(await store.requestReplay('shipping.ship-order', message.id)).toBe(true);
      const [undecodable] = (await store.list({ consumer: 'shipping.ship-order', limit: 50 })).filter((r) => r.messageId === null);
      expect(await store.requestReplay('shipping.ship-order', undecodable.key)).toBe(false);
      await expect(app.inbox.poison!.replay('shipping.ship-order', undecodable.key)).rejects.toThrow(/cannot be replayed: it could not be decoded/);
      await app.inbox.poison!.runRequested({ warn: (text) => fail(text) });
      await expect(store.get('shipping.ship-order', message.id)).resolves.toBeUndefined();
      const counts = await app.inbox.poison!.counts();
      expect(counts.find((c) => c.consumer === 'shipping.ship-order' && c.state === 'set-aside')!.count).toBeGreaterThanOrEqual(3);
      // Every database gives the oldest first failure in the same ISO-8601 UTC form (status and health read its age).
      for (const c of counts) expect(c.oldestFailedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      await app.inbox.poison!.remove('shipping.ship-order', undecodable.key);
      await expect(app.inbox.poison!.remove('shipping.ship-order', undecodable.key)).rejects.toThrow(/No poison record/);
    });

    it('refuses a consumer name used by two handlers, naming both', async () => {
      await expect(start(database, variant, { controllers: [ShippingConsumer], providers: [CopyCatConsumer] })).rejects.toThrow(
        /"shipping\.ship-order" is used by both (ShippingConsumer\.onOrder and CopyCatConsumer\.onOrder|CopyCatConsumer\.onOrder and ShippingConsumer\.onOrder)/,
      );
    });
  });
}
