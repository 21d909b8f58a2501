import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEventSchemaShape, loadEventSchema, registrySchemaText } from './event-schema';
import { subjectName } from './subject-names';

const ORDER = { type: 'record', name: 'OrderPlaced', namespace: 'shop', fields: [{ name: 'orderId', type: 'string' }] };
const descriptor = { kind: 'message', typeName: 'shop.PaymentTaken', file: { name: 'p.proto', proto: { name: 'p.proto' }, dependencies: [] }, fields: [] };

describe('event schemas', () => {
  it('takes exactly one of avro, protobuf (a message descriptor) or jsonSchema', () => {
    expect([isEventSchemaShape({ avro: ORDER }), isEventSchemaShape({ avro: 'order.avsc' }), isEventSchemaShape({ jsonSchema: {} }), isEventSchemaShape({ protobuf: descriptor })]).toEqual([true, true, true, true]);
    expect([isEventSchemaShape({}), isEventSchemaShape({ avro: ORDER, jsonSchema: {} }), isEventSchemaShape({ protobuf: {} }), isEventSchemaShape({ avro: 3 }), isEventSchemaShape({ xml: {} })]).toEqual([false, false, false, false, false]);
  });

  it('reads a schema file the event names, relative to the schema directory, once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-schemas-'));
    writeFileSync(join(dir, 'order.avsc'), JSON.stringify(ORDER));
    writeFileSync(join(dir, 'refund.json'), JSON.stringify({ title: 'shop.Refund', type: 'object' }));
    expect(loadEventSchema('shop.order-placed', { avro: 'order.avsc' }, dir)).toEqual({ format: 'avro', definition: ORDER, recordName: 'shop.OrderPlaced' });
    expect(loadEventSchema('shop.refunded', { jsonSchema: 'refund.json' }, dir)).toMatchObject({ format: 'json', recordName: 'shop.Refund' });
    expect(() => loadEventSchema('shop.order-placed', { avro: 'missing.avsc' }, dir)).toThrow(`Cannot read the avro schema file of event "shop.order-placed", ${join(dir, 'missing.avsc')}`);
  });

  it('names records as the registry does, and refuses an Avro schema that is not a named record', () => {
    expect(loadEventSchema('a', { avro: { type: 'record', name: 'x.Y', fields: [] } }).recordName).toBe('x.Y');
    expect(loadEventSchema('a', { jsonSchema: { type: 'object' } }).recordName).toBe('a');
    expect(loadEventSchema('a', { protobuf: descriptor }).recordName).toBe('shop.PaymentTaken');
    expect(() => loadEventSchema('shop.total', { avro: { type: 'double' } })).toThrow('The schema of event "shop.total" is not valid (an Avro event schema must be a record with a "name")');
  });

  it('gives the registry Avro and JSON Schema as JSON text, Protobuf as a base64 file descriptor', () => {
    expect(registrySchemaText(loadEventSchema('a', { avro: ORDER }), () => new Uint8Array())).toBe(JSON.stringify(ORDER));
    expect(registrySchemaText(loadEventSchema('p', { protobuf: descriptor }), () => Uint8Array.from([1, 2, 3]))).toBe('AQID');
  });

  it('names subjects by the TopicNameStrategy, RecordNameStrategy and TopicRecordNameStrategy', () => {
    expect(['topic', 'record', 'topic-record'].map((strategy) => subjectName(strategy as never, 'orders', 'shop.OrderPlaced'))).toEqual(['orders-value', 'shop.OrderPlaced', 'orders-shop.OrderPlaced']);
  });
});
