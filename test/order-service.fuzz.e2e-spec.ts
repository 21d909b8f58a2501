import fc from 'fast-check';
import request from 'supertest';
import { startOrderService, type RunningOrderService } from './support/order-service.harness';

/**
 * Property: whatever body and headers a client sends to POST /orders, the answer is never a 5xx,
 * and a refused request leaves no order and no outbox row behind. Bounded in runs and in time.
 */
// PostgreSQL, the strictest of the three: it refuses NUL in text and over-long varchar values.
describe('order-service under fuzzed requests (PostgreSQL + TCP)', () => {
  let service: RunningOrderService;

  beforeAll(async () => {
    service = await startOrderService('postgres', 'tcp', { outbox: { relay: false } });
  });

  afterAll(async () => {
    await service?.close();
  });

  const plausibleItem = fc.record(
    { sku: fc.oneof(fc.constantFrom('PEN', 'BOOK-1'), fc.string({ maxLength: 80 })), quantity: fc.oneof(fc.integer(), fc.double(), fc.string()), unitPriceCents: fc.oneof(fc.integer(), fc.bigInt().map(String), fc.constant(null)) },
    { requiredKeys: [] },
  );
  const body = fc.oneof(
    fc.record({ customerId: fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), fc.anything()), items: fc.oneof(fc.array(plausibleItem, { maxLength: 5 }), fc.anything()) }, { requiredKeys: [] }),
    fc.jsonValue({ maxDepth: 30 }),
    fc.anything({ maxDepth: 8 }),
  );
  const headerValue = fc.string({ unit: 'grapheme-ascii', maxLength: 400 });
  const headers = fc.record(
    { 'x-correlation-id': headerValue, 'x-causation-id': headerValue, 'x-tenant-id': headerValue, traceparent: headerValue },
    { requiredKeys: [] },
  );
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.uuid(), fc.constantFrom('\u0000', 'a\u0000b', 'x'.repeat(300)));

  it('never answers 5xx, and writes nothing for a refused request', async () => {
    const http = service.app.getHttpServer();
    await fc.assert(
      fc.asyncProperty(body, headers, async (payload, sent) => {
        const before = await counts();
        const response = await request(http)
          .post('/orders')
          .set(sent)
          .set('content-type', 'application/json')
          .send(JSON.stringify(payload) ?? 'null');
        expect(response.status).toBeLessThan(500);
        const after = await counts();
        if (response.status >= 400) expect(after).toEqual(before);
      }),
      // fast-check prints the seed and the shrunk counterexample of a failure, to replay it.
      { numRuns: 300, interruptAfterTimeLimit: 30_000 },
    );
  }, 60_000);

  it('never answers 5xx to fuzzed order ids, cancel reasons and query strings', async () => {
    const http = service.app.getHttpServer();
    const [placed] = [await request(http).post('/orders').send({ customerId: 'c-fuzz', items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 5 }] }).expect(201)];
    await fc.assert(
      fc.asyncProperty(fc.oneof(text, fc.constant(placed.body.id as string)), fc.anything({ maxDepth: 4 }), text, async (id, reason, query) => {
        const before = await counts();
        const path = `/orders/${encodeURIComponent(id)}`;
        const cancel = await request(http).post(`${path}/cancel`).set('content-type', 'application/json').send(JSON.stringify({ reason }) ?? 'null');
        const answers: Array<[string, number]> = [
          ['GET /orders/:id', (await request(http).get(path)).status],
          ['POST /orders/:id/cancel', cancel.status],
          ['GET /received-events/timeline', (await request(http).get('/received-events/timeline').query({ orderId: query })).status],
          ['GET /received-events', (await request(http).get('/received-events').query({ aggregateId: query })).status],
        ];
        for (const [route, status] of answers) expect(`${route} → ${status}`).not.toMatch(/→ 5\d\d$/);
        const after = await counts();
        if (cancel.status >= 400) expect(after).toEqual(before);
      }),
      { numRuns: 150, interruptAfterTimeLimit: 30_000 },
    );
  }, 60_000);

  async function counts(): Promise<{ orders: number; rows: number }> {
    const [{ n: orders }] = await service.dataSource.query('SELECT COUNT(*) AS n FROM orders');
    return { orders: Number(orders), rows: (await service.outboxRows()).length };
  }
});
