import 'reflect-metadata';
import { MockClient } from '@confluentinc/schemaregistry';
import { OutboxEvent } from '../decorators/outbox-event.decorator';
import { OutboxConfigurationError, OutboxNonRetryableError, OutboxWriteError } from '../core/outbox.errors';
import { toOutgoingMessage } from '../core/envelope';
import type { ClaimedMessage } from '../core/outbox-message';
import type { OutboxEventSchema } from '../core/schema-registry/event-schema';
import { resolveSchemaRegistryOptions, type SchemaRegistryOptions } from '../core/schema-registry/schema-registry.options';
import { OutboxRecordDecoder } from './outbox-record.decoder';
import { OutboxSchemas } from './outbox-schemas';

// The registry client's in-memory registry (MockClient) stands in for a registry server; everything of the outbox is real.

const ORDER = { type: 'record', name: 'OrderPlaced', namespace: 'shop', fields: [{ name: 'orderId', type: 'string' }, { name: 'total', type: 'double' }] };
const REFUND = { title: 'shop.Refund', type: 'object', properties: { refundId: { type: 'string' }, cents: { type: 'integer', minimum: 1 } }, required: ['refundId', 'cents'], additionalProperties: false };
const EVENTS: Record<string, OutboxEventSchema> = { 'shop.order-placed': { avro: ORDER }, 'shop.refunded': { jsonSchema: REFUND } };

function schemasOn(client: MockClient, options: Partial<SchemaRegistryOptions> = {}, destinations: Record<string, string[]> = { 'shop.order-placed': ['orders'], 'shop.refunded': ['refunds'] }): OutboxSchemas {
  return new OutboxSchemas(resolveSchemaRegistryOptions({ client, events: EVENTS, ...options }), { destinationsOf: ({ type }) => destinations[type] ?? [], plainTransports: ['in-process'] });
}

const to = (destination: string, transport = 'default') => [{ transport, destination }];

function claimed(type: string, destination: string, payload: unknown): ClaimedMessage {
  return {
    id: '0190a0c4-0000-7000-8000-000000000001', type, version: 1, aggregateType: 'Order', aggregateId: 'o-1', transport: 'default', destination,
    occurredAt: '2026-11-29T10:00:00.000Z', headers: { 'x-request-id': 'r-1' }, payloadJson: JSON.stringify(payload), attempts: 0,
  } as unknown as ClaimedMessage;
}

describe('OutboxSchemas', () => {
  it('refuses a write before the schemas were prepared at startup', () => {
    expect(() => schemasOn(new MockClient({ baseURLs: ['mock://'] })).checkBeforeWrite({ type: 'shop.order-placed', payload: {} }, to('orders'))).toThrow(/has not finished/);
  });

  it('names every field a payload gets wrong, for Avro and JSON Schema, and leaves in-process destinations and other events alone', async () => {
    const schemas = schemasOn(new MockClient({ baseURLs: ['mock://'] }));
    await schemas.prepare();
    const problems = (type: string, payload: unknown, destinations = to(type === 'shop.refunded' ? 'refunds' : 'orders')) => {
      try {
        schemas.checkBeforeWrite({ type, payload }, destinations);
        return 'accepted';
      } catch (error) {
        expect(error).toBeInstanceOf(OutboxWriteError);
        return (error as Error).message;
      }
    };
    expect(problems('shop.order-placed', { orderId: 'o-1', total: 2 })).toBe('accepted');
    expect(problems('shop.order-placed', { orderId: 7, total: 'x' })).toMatch(/subject "orders-value".*"orderId" \(7 is not a valid "string"\); "total" \("x" is not a valid "double"\)/);
    expect(problems('shop.order-placed', { orderId: 'o-1', total: 2, totl: 3 })).toMatch(/"\(payload\)" \(has fields the schema does not declare\)/);
    expect(problems('shop.refunded', { refundId: 'r', cents: 0, why: 'x' })).toMatch(/json schema \(subject "refunds-value"\): "\(payload\)" \(must NOT have additional properties\); "cents" \(must be >= 1\)/);
    expect(problems('shop.order-placed', { orderId: 7 }, to('handler', 'in-process'))).toBe('accepted');
    expect(problems('shop.unknown', { anything: true })).toBe('accepted');
  });

  it('refuses a claim-checked payload of an event with a schema: its reference cannot travel in the wire format', async () => {
    const schemas = schemasOn(new MockClient({ baseURLs: ['mock://'] }));
    await schemas.prepare();
    const claimedMessage = [{ transport: 'default', destination: 'orders', claimed: { reference: {} } }];
    expect(() => schemas.checkBeforeWrite({ type: 'shop.order-placed', payload: { orderId: 'o-1', total: 2 } }, claimedMessage)).toThrow(/claimCheck\.thresholdBytes.*subject "orders-value"/s);
    // An event without a schema may be claim-checked.
    expect(() => schemas.checkBeforeWrite({ type: 'shop.unknown', payload: {} }, claimedMessage)).not.toThrow();
  });

  it('registers under the record and topic-record strategies', async () => {
    const client = new MockClient({ baseURLs: ['mock://'] });
    await schemasOn(client, { subjectStrategy: 'record' }).prepare();
    await schemasOn(client, { subjectStrategy: 'topic-record' }).prepare();
    expect((await client.getAllSubjects()).sort()).toEqual(['orders-shop.OrderPlaced', 'refunds-shop.Refund', 'shop.OrderPlaced', 'shop.Refund']);
  });

  it('with autoRegister: false, refuses to start while a subject lacks the schema, and starts once it is registered', async () => {
    const client = new MockClient({ baseURLs: ['mock://'] });
    const lookUpOnly = () => schemasOn(client, { autoRegister: false }, { 'shop.order-placed': ['orders'] });
    await expect(lookUpOnly().prepare()).rejects.toThrow(new OutboxConfigurationError('The schema of event "shop.order-placed" is not registered under subject "orders-value", and "schemaRegistry.autoRegister" is false. Register it first (e.g. "nest-outbox schemas check --register" in CI), or set autoRegister: true.'));
    const id = await client.register('orders-value', { schemaType: 'AVRO', schema: JSON.stringify(ORDER) }, false);
    const schemas = lookUpOnly();
    await schemas.prepare();
    expect(schemas.subjects()).toEqual([{ eventType: 'shop.order-placed', destination: 'orders', subject: 'orders-value', format: 'avro', schemaId: id }]);
  });

  it("checks the subject's compatibility level: removing a field is backward compatible, but not forward", async () => {
    const client = new MockClient({ baseURLs: ['mock://'] });
    await client.register('orders-value', { schemaType: 'AVRO', schema: JSON.stringify(ORDER) }, false);
    const withoutTotal = { 'shop.order-placed': { avro: { ...ORDER, fields: [ORDER.fields[0]] } } };
    await client.updateCompatibility('orders-value', 'FORWARD' as never);
    await expect(schemasOn(client, { events: withoutTotal }).prepare()).rejects.toThrow(/FORWARD compatibility check of subject "orders-value".*the registered schema cannot read data written with the new one/);
    await client.updateCompatibility('orders-value', 'BACKWARD' as never);
    await schemasOn(client, { events: withoutTotal }).prepare();
    expect(await client.getAllVersions('orders-value')).toEqual([1, 2]);
  });

  it('encodes in the wire format what the decoder reads back, and prepares a destination unknown at startup on its first publish', async () => {
    const client = new MockClient({ baseURLs: ['mock://'] });
    const schemas = schemasOn(client);
    await schemas.prepare();
    const outgoing = toOutgoingMessage(claimed('shop.refunded', 'refunds-eu', { refundId: 'r-1', cents: 250 }));
    const value = (await schemas.encode(outgoing))!;
    const id = (await client.getLatestSchemaMetadata('refunds-eu-value')).id;
    expect([value[0], value.readInt32BE(1)]).toEqual([0, id]);
    expect(await new OutboxRecordDecoder(client).decode('refunds-eu', { value, headers: outgoing.headers })).toEqual({ ...outgoing.envelope, headers: { 'x-request-id': 'r-1' } });
    expect(await schemas.encode(toOutgoingMessage(claimed('shop.unknown', 'orders', {})))).toBeUndefined();
  });

  it('fails a publish for good when the schema is incompatible with a subject met at publish time', async () => {
    const client = new MockClient({ baseURLs: ['mock://'] });
    // "total" was a string: the new schema cannot read it as a double.
    await client.register('orders-eu-value', { schemaType: 'AVRO', schema: JSON.stringify({ ...ORDER, fields: [ORDER.fields[0], { name: 'total', type: 'string' }] }) }, false);
    const schemas = schemasOn(client);
    await schemas.prepare();
    await expect(schemas.encode(toOutgoingMessage(claimed('shop.order-placed', 'orders-eu', { orderId: 'o', total: 1 })))).rejects.toThrow(OutboxNonRetryableError);
  });

  it('refuses a write of an event whose schema class was loaded after the module started', async () => {
    const schemas = schemasOn(new MockClient({ baseURLs: ['mock://'] }));
    await schemas.prepare();
    OutboxEvent('shop.late', { schema: { avro: ORDER } })(class Late {});
    expect(() => schemas.checkBeforeWrite({ type: 'shop.late', payload: {} }, to('orders'))).toThrow(/class was loaded after OutboxModule started/);
  });
});
