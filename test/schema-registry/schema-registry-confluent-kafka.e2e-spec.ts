import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { MockClient } from '@confluentinc/schemaregistry';
import { Pool } from 'pg';
import { OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { ConfluentKafkaTransport } from '@nest-outbox/outbox/kafka';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin, privatePostgresSchema } from '../support/databases';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { closeAll } from '../support/teardown';
import { expectWireFormatRoundTrip, ordersTopic, paymentsTopic, RawConsumer, suffix } from './schema-registry.fixtures';

/** The same round trip as through ClientKafka, through ConfluentKafkaTransport (librdkafka). */
describe('Schema Registry serializers on Kafka (ConfluentKafkaTransport)', () => {
  const brokers = requireService('kafka').split(',');
  const registry = new MockClient({ baseURLs: ['mock://'] });
  const raw = new RawConsumer();
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let app: INestApplication;

  beforeAll(async () => {
    database = await privatePostgresSchema('schema_registry_ckjs');
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(database.url, sql);
    pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 4 });
    const transport = new ConfluentKafkaTransport({ brokers, clientId: `sr-ckjs-${suffix}` });
    const moduleRef = await Test.createTestingModule({ imports: [OutboxModule.forRoot({ connection: { pool }, transport, pollIntervalMs: 100, schemaRegistry: { client: registry } })] })
      .setLogger(silentLogger)
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await raw.start(brokers, [ordersTopic, paymentsTopic]);
  }, 90_000);

  afterAll(() => closeAll(() => app?.close(), () => raw.stop(), () => pool?.end(), () => database?.drop()));

  it('an Avro and a Protobuf event round-trip in the Confluent wire format, decoded by the registry client', async () => {
    const client = await pool.connect();
    let ids: string[];
    try {
      await client.query('BEGIN');
      ids = await app.get(OutboxPublisher).add(client, [
        { type: `sr.order-placed.${suffix}`, aggregateType: 'Order', aggregateId: 'o-1', topic: ordersTopic, payload: { orderId: 'o-1', total: 42.5, note: null } },
        { type: `sr.payment-taken.${suffix}`, aggregateType: 'Payment', aggregateId: 'p-1', topic: paymentsTopic, payload: { paymentId: 'p-1', amountCents: '4250', currency: 'EUR' } },
      ]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await expectWireFormatRoundTrip(registry, raw, ids[0], ids[1]);
  }, 60_000);
});
