import { randomBytes } from 'node:crypto';
import { AvroDeserializer, ProtobufDeserializer, SerdeType, type MockClient } from '@confluentinc/schemaregistry';
import { Kafka, logLevel, type Consumer, type KafkaMessage } from 'kafkajs';
import { OutboxEvent } from '@nest-outbox/outbox';
import { waitFor } from '../support/wait-for';
import { paymentTakenDescriptor } from './protobuf-fixture';

// The events of the Schema Registry tests, on topics of their own per test file (each file loads this module anew).

export const suffix = randomBytes(4).toString('hex');
export const ordersTopic = `sr-orders-${suffix}`;
export const paymentsTopic = `sr-payments-${suffix}`;

export const ORDER_PLACED_V1 = {
  type: 'record',
  name: 'OrderPlaced',
  namespace: 'shop',
  fields: [
    { name: 'orderId', type: 'string' },
    { name: 'total', type: 'double' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

@OutboxEvent(`sr.order-placed.${suffix}`, { topic: ordersTopic, schema: { avro: ORDER_PLACED_V1 } })
export class OrderPlaced {
  orderId!: string;
  total!: number;
}

@OutboxEvent(`sr.payment-taken.${suffix}`, { topic: paymentsTopic, schema: { protobuf: paymentTakenDescriptor(`shop/payment_taken_${suffix}.proto`) } })
export class PaymentTaken {
  paymentId!: string;
  amountCents!: string;
  currency!: string;
}

/** A consumer of the raw records: kafkajs reads, and the test decodes with the registry client's deserializers alone. */
export class RawConsumer {
  readonly records: Array<{ topic: string; message: KafkaMessage }> = [];
  private consumer: Consumer | undefined;

  async start(brokers: string[], topics: string[]): Promise<void> {
    const kafka = new Kafka({ clientId: `sr-raw-${suffix}`, brokers, logLevel: logLevel.NOTHING });
    this.consumer = kafka.consumer({ groupId: `sr-raw-${randomBytes(5).toString('hex')}`, maxWaitTimeInMs: 100, sessionTimeout: 6_000, rebalanceTimeout: 6_000, heartbeatInterval: 1_000 });
    await this.consumer.connect();
    await this.consumer.subscribe({ topics, fromBeginning: true });
    await this.consumer.run({ eachMessage: async ({ topic, message }) => void this.records.push({ topic, message }) });
  }

  byId(id: string): { topic: string; message: KafkaMessage } | undefined {
    return this.records.find(({ message }) => message.headers?.['outbox-message-id']?.toString() === id);
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}

/** The records of both events, as the consumer read them, decoded by the registry client's own deserializers: no code of the outbox. */
export async function expectWireFormatRoundTrip(registry: MockClient, raw: RawConsumer, orderId: string, paymentId: string): Promise<void> {
  const order = await waitFor('the Avro record', () => raw.byId(orderId), 30_000);
  const payment = await waitFor('the Protobuf record', () => raw.byId(paymentId), 30_000);

  const avroId = (await registry.getLatestSchemaMetadata(`${ordersTopic}-value`)).id;
  const value = order.message.value!;
  expect(order.topic).toBe(ordersTopic);
  expect([value[0], value.readInt32BE(1)]).toEqual([0, avroId]);
  const decodedOrder = await new AvroDeserializer(registry, SerdeType.VALUE, {}).deserialize(ordersTopic, value);
  expect(decodedOrder).toEqual({ orderId: 'o-1', total: 42.5, note: null });
  expect(order.message.key?.toString()).toBe('o-1');
  expect(order.message.headers?.['outbox-event-type']?.toString()).toBe(`sr.order-placed.${suffix}`);

  const protobufId = (await registry.getLatestSchemaMetadata(`${paymentsTopic}-value`)).id;
  const bytes = payment.message.value!;
  // Magic byte, schema id, then the message indexes: [0], the first message of the file, is the single byte 0.
  expect([bytes[0], bytes.readInt32BE(1), bytes[5]]).toEqual([0, protobufId, 0]);
  const decodedPayment = (await new ProtobufDeserializer(registry, SerdeType.VALUE, {}).deserialize(paymentsTopic, bytes)) as Record<string, unknown>;
  expect(decodedPayment).toMatchObject({ $typeName: 'shop.PaymentTaken', paymentId: 'p-1', amountCents: BigInt(4250), currency: 'EUR' });
}
