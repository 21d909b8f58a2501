import type { AsyncApiDocument } from '@nest-outbox/outbox/asyncapi';
import { startOrderService, type RunningOrderService } from '../support/order-service.harness';
import { validateAsyncApi } from './asyncapi-support';

// The demo as it runs (SQLite, TCP), its console mounted: the document is one HTTP request away.
describe('the AsyncAPI document of the demo app (apps/order-service)', () => {
  let service: RunningOrderService;
  let url: string;

  beforeAll(async () => {
    service = await startOrderService('sqlite', 'tcp', { console: 'demo-no-auth' });
    await service.app.listen(0, '127.0.0.1');
    url = `${await service.app.getUrl()}/outbox/api/asyncapi.json`;
  });
  afterAll(() => service?.close());

  it('is valid AsyncAPI 3.0 and lists the three order events on the orders topic, as envelopes with the outbox headers', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const text = await response.text();
    const { errors, all } = await validateAsyncApi(text);
    expect(errors).toEqual([]);
    // Only the parser's advice to move to 3.1 remains: nothing of ours is even a warning.
    expect(all).toEqual([expect.stringMatching(/^2 asyncapi-latest-version /)]);
    const doc: AsyncApiDocument = JSON.parse(text);
    const topic = service.config.ordersTopic;
    expect(doc.info).toMatchObject({ title: 'order-service', version: '0.1.0', description: expect.stringMatching(/^Orders placed, paid and cancelled, keyed by order id\.\n\nMade from the classes declared with @OutboxEvent/) });
    expect(Object.keys(doc.channels)).toEqual([topic]);
    expect(doc.channels[topic].address).toBe(topic);
    expect(Object.keys(doc.channels[topic].messages)).toEqual(['orders.order-cancelled.v1', 'orders.order-paid.v1', 'orders.order-placed.v1']);
    expect(doc.operations).toEqual({
      [`send-${topic}`]: expect.objectContaining({ action: 'send', channel: { $ref: `#/channels/${topic}` }, messages: expect.arrayContaining([{ $ref: `#/channels/${topic}/messages/orders.order-placed.v1` }]) }),
    });
    const placed = doc.components.messages['orders.order-placed.v1'];
    expect(placed).toMatchObject({ name: 'orders.order-placed', title: 'OrderPlaced', headers: { $ref: '#/components/schemas/OutboxEnvelopeHeaders' } });
    const envelope = placed.payload as { properties: Record<string, any> };
    expect(envelope.properties.type).toEqual({ type: 'string', const: 'orders.order-placed' });
    // The demo's events declare no class-validator decorator: the payload is an object, and the document says why.
    expect(envelope.properties.payload).toEqual({ type: 'object', description: expect.stringContaining('OrderPlaced declares no class-validator decorator') });
    expect(Object.keys((doc.components.schemas.OutboxEnvelopeHeaders as { properties: object }).properties)).toContain('outbox-event-type');
  });
});
