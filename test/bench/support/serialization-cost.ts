import { MockClient } from '@confluentinc/schemaregistry';
import { create, createFileRegistry, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { toOutgoingMessage } from '../../../libs/outbox/src/core/envelope';
import type { ClaimedMessage, OutgoingMessage } from '../../../libs/outbox/src/core/outbox-message';
import { bodyOf } from '../../../libs/outbox/src/core/outbox-message';
import { resolveSchemaRegistryOptions } from '../../../libs/outbox/src/core/schema-registry/schema-registry.options';
import { OutboxSchemas } from '../../../libs/outbox/src/schema-registry/outbox-schemas';
import { type SummaryRow, table } from './report';

// P1's payload shape (an order with lines), as Avro and Protobuf schemas of the same fields.
const AVRO = {
  type: 'record', name: 'OrderPlaced', namespace: 'bench',
  fields: [
    { name: 'orderId', type: 'string' },
    { name: 'customerId', type: 'string' },
    { name: 'totalCents', type: 'long' },
    { name: 'currency', type: 'string' },
    { name: 'lines', type: { type: 'array', items: { type: 'record', name: 'Line', fields: [{ name: 'sku', type: 'string' }, { name: 'quantity', type: 'int' }] } } },
  ],
};

function protobufOrder(): DescMessage {
  const string = 9, int64 = 3, int32 = 5, message = 11, optional = 1, repeated = 3;
  const file = create(FileDescriptorProtoSchema, {
    name: 'bench/order.proto', package: 'bench', syntax: 'proto3',
    messageType: [
      { name: 'Line', field: [{ name: 'sku', jsonName: 'sku', number: 1, type: string, label: optional }, { name: 'quantity', jsonName: 'quantity', number: 2, type: int32, label: optional }] },
      {
        name: 'OrderPlaced',
        field: [
          { name: 'order_id', jsonName: 'orderId', number: 1, type: string, label: optional },
          { name: 'customer_id', jsonName: 'customerId', number: 2, type: string, label: optional },
          { name: 'total_cents', jsonName: 'totalCents', number: 3, type: int64, label: optional },
          { name: 'currency', jsonName: 'currency', number: 4, type: string, label: optional },
          { name: 'lines', jsonName: 'lines', number: 5, type: message, typeName: '.bench.Line', label: repeated },
        ],
      },
    ],
  });
  return createFileRegistry(file, () => undefined).getMessage('bench.OrderPlaced')!;
}

function message(type: string, index: number): OutgoingMessage {
  const payload = { orderId: `order-${index}`, customerId: `customer-${index % 97}`, totalCents: 4250 + index, currency: 'EUR', lines: [{ sku: 'A-1', quantity: 2 }, { sku: 'B-7', quantity: 1 }] };
  const row = { id: `0190a0c4-0000-7000-8000-${String(index).padStart(12, '0')}`, type, version: 1, aggregateType: 'Order', aggregateId: `order-${index}`, transport: 'default', destination: type, occurredAt: '2026-11-29T10:00:00.000Z', headers: {}, payloadJson: JSON.stringify(payload), attempts: 0 };
  return toOutgoingMessage(row as unknown as ClaimedMessage);
}

/**
 * What the relay spends per message to make the record's value, in process (no broker, the
 * registry client's in-memory MockClient, whose lookups the serializers cache as they would a
 * server's): the outbox envelope as JSON text beside the payload in the Confluent wire format, Avro
 * and Protobuf. Messages are made beforehand; the same messages are encoded by each, in turns.
 */
export async function serializationCost(count: number, rounds: number): Promise<{ body: string[]; summary: SummaryRow[] }> {
  const schemas = new OutboxSchemas(resolveSchemaRegistryOptions({ client: new MockClient({ baseURLs: ['mock://'] }), events: { 'bench.avro': { avro: AVRO }, 'bench.protobuf': { protobuf: protobufOrder() } } }), {
    // A topic per event: under TopicNameStrategy one topic's subject holds one schema.
    destinationsOf: ({ type }) => [type],
  });
  await schemas.prepare();
  const variants: Array<{ name: string; messages: OutgoingMessage[]; encode: (message: OutgoingMessage) => Promise<unknown> | unknown; bytes?: number }> = [
    { name: 'JSON envelope (`JSON.stringify`, no registry)', messages: Array.from({ length: count }, (_, index) => message('bench.json', index)), encode: (m) => Buffer.from(JSON.stringify(bodyOf(m))) },
    { name: 'Avro, Confluent wire format', messages: Array.from({ length: count }, (_, index) => message('bench.avro', index)), encode: (m) => schemas.encode(m) },
    { name: 'Protobuf, Confluent wire format', messages: Array.from({ length: count }, (_, index) => message('bench.protobuf', index)), encode: (m) => schemas.encode(m) },
  ];
  const timings = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
  for (let round = 0; round < rounds + 1; round++) {
    for (const variant of variants) {
      const started = process.hrtime.bigint();
      let bytes = 0;
      for (const m of variant.messages) bytes += ((await variant.encode(m)) as Buffer).length;
      const microsPerMessage = Number(process.hrtime.bigint() - started) / 1000 / count;
      variant.bytes = bytes / count;
      // The first round warms each path (JIT, the serializers' caches) and is not counted.
      if (round > 0) timings.get(variant.name)!.push(microsPerMessage);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const json = median(timings.get(variants[0].name)!);
  const rows = variants.map((variant) => {
    const micros = median(timings.get(variant.name)!);
    return [variant.name, micros.toFixed(1), (micros / json).toFixed(1), variant.bytes!.toFixed(0)];
  });
  return {
    body: [
      `Making a record's value, per message, in process (${count.toLocaleString('en')} messages of P1's payload shape, median of ${rounds} rounds after a warm-up; the registry is the client's in-memory MockClient, whose lookups the serializers cache as they would a server's; the envelope's fields go in headers either way):`,
      '',
      ...table(['value', 'µs per message', '× JSON', 'bytes'], rows),
    ],
    summary: rows.slice(1).map(([name, micros]) => ({ bench: 'P1', figure: `${name.split(',')[0]} value per message (µs; JSON ${json.toFixed(1)})`, value: micros })),
  };
}
