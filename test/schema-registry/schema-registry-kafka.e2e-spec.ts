import type { INestApplication } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { MockClient } from '@confluentinc/schemaregistry';
import { logLevel } from 'kafkajs';
import { Pool } from 'pg';
import { OutboxAsyncApi } from '@nest-outbox/outbox/asyncapi';
import { validateAsyncApi } from '../asyncapi/asyncapi-support';
import { OutboxInbox, OutboxInboxModule, OutboxModule, OutboxPublisher, toOutboxEvent } from '@nest-outbox/outbox';
import type { SqlTransaction } from '@nest-outbox/outbox/core';
import { OutboxRecordDecoder } from '@nest-outbox/outbox/kafka';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { poisonDialectFor } from '../../libs/outbox/src/sql/poison/poison-sql.dialect';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin, privatePostgresSchema } from '../support/databases';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';
import { paymentTakenDescriptor, PROTOBUF_STRING } from './protobuf-fixture';
import { expectWireFormatRoundTrip, ORDER_PLACED_V1, OrderPlaced, ordersTopic, paymentsTopic, RawConsumer, suffix } from './schema-registry.fixtures';

/**
 * Avro and Protobuf events saved with the outbox go through the real test broker in the Confluent
 * wire format, registered in the registry client's in-memory registry (`MockClient`: no registry
 * server installs here); the consumer side is kafkajs and the registry client's own deserializers.
 */
describe('Schema Registry serializers on Kafka (ClientKafka)', () => {
  const brokers = requireService('kafka').split(',');
  const registry = new MockClient({ baseURLs: ['mock://'] });
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let app: INestApplication;
  let inboxApp: INestApplication;
  const raw = new RawConsumer();

  const kafkaClient = () => ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `sr-${suffix}`, brokers, logLevel: logLevel.NOTHING }, producerOnlyMode: true } }]);

  type ModuleOptions = Parameters<typeof OutboxModule.forRoot>[0];
  async function startApp(schemaRegistry: ModuleOptions['schemaRegistry'], extra: Partial<ModuleOptions> = {}): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({ imports: [kafkaClient(), OutboxModule.forRoot({ connection: { pool }, transport: 'KAFKA', pollIntervalMs: 100, schemaRegistry, ...extra })] })
      .setLogger(silentLogger)
      .compile();
    const started = moduleRef.createNestApplication({ logger: false });
    try {
      await started.init();
    } catch (error) {
      await started.close().catch(() => undefined);
      throw error;
    }
    return started;
  }

  async function inTransaction<T>(work: (client: import('pg').PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  const rowsOf = async (aggregateId: string) => Number((await pool.query('SELECT count(*) AS n FROM outbox_messages WHERE aggregate_id = $1', [aggregateId])).rows[0].n);

  beforeAll(async () => {
    database = await privatePostgresSchema('schema_registry');
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(database.url, sql);
    pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 6 });
    for (const sql of [...inboxDialectFor('postgres', 'outbox_inbox').createTable(), ...poisonDialectFor('postgres', 'outbox_inbox_poison').createTable()]) await pool.query(sql);
    app = await startApp({ client: registry });
    const inboxModule = await Test.createTestingModule({ imports: [OutboxInboxModule.forRoot({ connection: { pool }, pruneIntervalMs: 0, replayPollMs: 0 })] })
      .setLogger(silentLogger)
      .compile();
    inboxApp = inboxModule.createNestApplication({ logger: false });
    await inboxApp.init();
    await raw.start(brokers, [ordersTopic, paymentsTopic]);
  }, 90_000);

  afterAll(() => closeAll(() => app?.close(), () => inboxApp?.close(), () => raw.stop(), () => pool?.end(), () => database?.drop()));

  it('registers each event schema at startup under the TopicNameStrategy subject', async () => {
    const avro = await registry.getLatestSchemaMetadata(`${ordersTopic}-value`);
    const protobuf = await registry.getLatestSchemaMetadata(`${paymentsTopic}-value`);
    expect(avro).toMatchObject({ version: 1, schemaType: 'AVRO' });
    expect(JSON.parse(avro.schema)).toEqual(ORDER_PLACED_V1);
    expect(protobuf).toMatchObject({ version: 1, schemaType: 'PROTOBUF' });
  });

  it('the AsyncAPI document references the registered schemas: the Kafka binding and the subjects', async () => {
    const document = app.get(OutboxAsyncApi).document();
    expect((await validateAsyncApi(document)).errors).toEqual([]);
    const messages = document.components.messages;
    expect(messages[`sr.order-placed.${suffix}.v1`]).toMatchObject({
      bindings: { kafka: { schemaIdLocation: 'payload', schemaIdPayloadEncoding: 'confluent', schemaLookupStrategy: 'TopicIdStrategy', bindingVersion: '0.5.0' } },
      'x-schema-registry': { format: 'avro', subjects: [`${ordersTopic}-value`], contentType: 'application/vnd.apache.avro+binary' },
    });
    expect(messages[`sr.payment-taken.${suffix}.v1`]).toMatchObject({ 'x-schema-registry': { format: 'protobuf', subjects: [`${paymentsTopic}-value`] } });
  });

  it('an Avro and a Protobuf event round-trip in the Confluent wire format, decoded by the registry client', async () => {
    const [orderId, paymentId] = await inTransaction((client) =>
      app.get(OutboxPublisher).add(client, [
        { type: `sr.order-placed.${suffix}`, aggregateType: 'Order', aggregateId: 'o-1', topic: ordersTopic, payload: { orderId: 'o-1', total: 42.5, note: null } },
        { type: `sr.payment-taken.${suffix}`, aggregateType: 'Payment', aggregateId: 'p-1', topic: paymentsTopic, payload: { paymentId: 'p-1', amountCents: '4250', currency: 'EUR' } },
      ]),
    );
    await expectWireFormatRoundTrip(registry, raw, orderId, paymentId);
  }, 60_000);

  it('the inbox and a typed consumer read the records back through OutboxRecordDecoder, envelope fields from the headers', async () => {
    const [orderId, paymentId] = await inTransaction((client) =>
      app.get(OutboxPublisher).add(client, [
        { type: `sr.order-placed.${suffix}`, aggregateType: 'Order', aggregateId: 'o-2', topic: ordersTopic, payload: { orderId: 'o-2', total: 7, note: 'gift' }, correlationId: 'corr-2', headers: { 'x-request-id': 'req-2' } },
        { type: `sr.payment-taken.${suffix}`, aggregateType: 'Payment', aggregateId: 'p-2', topic: paymentsTopic, payload: { paymentId: 'p-2', amountCents: '700', currency: 'EUR' } },
      ]),
    );
    const decoder = new OutboxRecordDecoder(registry);
    const order = await waitFor('the Avro record', () => raw.byId(orderId), 30_000);
    const payment = await waitFor('the Protobuf record', () => raw.byId(paymentId), 30_000);
    const orderEnvelope = await decoder.decode(order.topic, order.message);
    const paymentEnvelope = await decoder.decode(payment.topic, payment.message);
    expect(orderEnvelope).toMatchObject({ id: orderId, type: `sr.order-placed.${suffix}`, version: 1, aggregateType: 'Order', aggregateId: 'o-2', correlationId: 'corr-2', headers: { 'x-request-id': 'req-2' }, payload: { orderId: 'o-2', total: 7, note: 'gift' } });
    // Protobuf's JSON form, as it was saved: int64 as a string.
    expect(paymentEnvelope).toMatchObject({ id: paymentId, aggregateId: 'p-2', payload: { paymentId: 'p-2', amountCents: '700', currency: 'EUR' } });

    const typed = toOutboxEvent(OrderPlaced, orderEnvelope);
    expect(typed).toBeInstanceOf(OrderPlaced);
    expect(typed).toMatchObject({ orderId: 'o-2', total: 7 });

    const inbox = inboxApp.get(OutboxInbox);
    const applied: string[] = [];
    const work = async (transaction: SqlTransaction) => {
      await transaction.query('SELECT 1', []);
      applied.push(orderEnvelope.id);
    };
    const first = await inbox.process(orderEnvelope, 'sr.projector', work);
    const again = await inbox.process(await decoder.decode(order.topic, order.message), 'sr.projector', work);
    expect([first.duplicate, again.duplicate, applied]).toEqual([false, true, [orderId]]);
  }, 60_000);

  it('refuses at save a payload that breaks its schema, naming the field, and commits nothing', async () => {
    const publisher = app.get(OutboxPublisher);
    await expect(
      inTransaction(async (client) => {
        await client.query("SELECT 'the caller''s own write'");
        return publisher.add(client, { type: `sr.order-placed.${suffix}`, aggregateType: 'Order', aggregateId: 'o-bad', topic: ordersTopic, payload: { orderId: 'o-bad', total: 'lots' } });
      }),
    ).rejects.toThrow(/"total" \("lots" is not a valid "double"\)/);
    await expect(
      inTransaction((client) => publisher.add(client, { type: `sr.payment-taken.${suffix}`, aggregateType: 'Payment', aggregateId: 'p-bad', topic: paymentsTopic, payload: { paymentId: 'p-bad', amountCents: 'ten', currency: 'EUR' } })),
    ).rejects.toThrow(/shop\.PaymentTaken\.amount_cents/);
    expect([await rowsOf('o-bad'), await rowsOf('p-bad')]).toEqual([0, 0]);
  });

  it('refuses to start with an incompatible change of an event schema, naming the subject, and registers nothing', async () => {
    // A required field added without a default: the new schema cannot read what version 1 wrote.
    const withoutDefault = { ...ORDER_PLACED_V1, fields: [...ORDER_PLACED_V1.fields, { name: 'currency', type: 'string' }] };
    await expect(startApp({ client: registry, events: { [`sr.order-placed.${suffix}`]: { avro: withoutDefault } } })).rejects.toThrow(
      new RegExp(`BACKWARD compatibility check of subject "${ordersTopic}-value" refuses the schema of event "sr\\.order-placed\\.${suffix}" against registered version 1`),
    );
    // A Protobuf field number that changes its type.
    await expect(
      startApp({ client: registry, events: { [`sr.payment-taken.${suffix}`]: { protobuf: paymentTakenDescriptor(`shop/payment_taken_${suffix}.proto`, PROTOBUF_STRING) } } }),
    ).rejects.toThrow(new RegExp(`subject "${paymentsTopic}-value".*field number 2 \\("amount_cents"`));
    expect(await registry.getAllVersions(`${ordersTopic}-value`)).toEqual([1]);
    expect(await registry.getAllVersions(`${paymentsTopic}-value`)).toEqual([1]);

    // A compatible change (a new field with a default) is registered as version 2.
    const withDefault = { ...ORDER_PLACED_V1, fields: [...ORDER_PLACED_V1.fields, { name: 'currency', type: 'string', default: 'EUR' }] };
    const evolved = await startApp({ client: registry, events: { [`sr.order-placed.${suffix}`]: { avro: withDefault } } });
    await evolved.close();
    expect(await registry.getAllVersions(`${ordersTopic}-value`)).toEqual([1, 2]);
  }, 60_000);

  it('refuses to start with envelope.headers other than all: the wire format leaves the envelope to the headers', async () => {
    await expect(startApp({ client: registry }, { envelope: { headers: 'id-and-type' } })).rejects.toThrow(/"schemaRegistry" needs "envelope\.headers: 'all'" \(got 'id-and-type'\)/);
  });
});
