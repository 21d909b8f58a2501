import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HTTP, type CloudEvent } from 'cloudevents';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Pool } from 'pg';
import { JetStreamTransport, OutboxConfigurationError, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin, privatePostgresSchema } from '../support/databases';
import { requireService } from '../support/services';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';

/**
 * A transport other than Kafka: NATS JetStream (the library's JetStreamTransport, raw body and NATS
 * headers) publishes structured CloudEvents, read back by a plain NATS subscriber with the SDK's
 * structured-mode decoder; binary mode, whose ce_* headers are Kafka's binding, is refused at bootstrap.
 */
describe('CloudEvents on NATS JetStream', () => {
  const suffix = randomBytes(4).toString('hex');
  const subject = `ce.${suffix}.parcels`;
  const nats = requireService('nats');
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let pool: Pool;
  let subscriber: NatsConnection;
  const received: Array<{ event: CloudEvent<unknown>; headers: Record<string, string> }> = [];

  const appWith = async (format: 'cloudevents-structured' | 'cloudevents-binary'): Promise<INestApplication> => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          connection: { pool },
          transport: new JetStreamTransport({ servers: nats, stream: { name: `CE_${suffix.toUpperCase()}`, subjects: [`ce.${suffix}.>`] } }),
          defaultTopic: subject,
          pollIntervalMs: 200,
          envelope: { format, source: 'urn:shop:parcels' },
        }),
      ],
    })
      .setLogger(silentLogger)
      .compile();
    return moduleRef.createNestApplication({ logger: false });
  };

  beforeAll(async () => {
    database = await privatePostgresSchema('cloudevents_nats');
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(database.url, sql);
    pool = new Pool({ connectionString: database.url, options: `-c search_path=${database.schema}`, max: 4 });
    subscriber = await connect({ servers: nats, name: `ce-subscriber-${suffix}` });
    subscriber.subscribe(subject, {
      callback: (error, message) => {
        if (error) return;
        const headers: Record<string, string> = {};
        for (const name of message.headers?.keys() ?? []) headers[name.toLowerCase()] = message.headers!.get(name);
        // The SDK alone: its HTTP binding decodes any structured-mode message from its content type and body.
        const event = HTTP.toEvent({ headers: { 'content-type': headers['content-type'] }, body: message.string() }) as CloudEvent<unknown>;
        received.push({ event, headers });
      },
    });
    await subscriber.flush();
  });

  afterAll(async () => {
    if (subscriber) await (await jetstreamManager(subscriber)).streams.delete(`CE_${suffix.toUpperCase()}`).catch(() => undefined);
    await subscriber?.close();
    await pool?.end();
    await database?.drop();
  });

  it('publishes structured CloudEvents that the SDK reads, with the user headers as NATS headers', async () => {
    const app = await appWith('cloudevents-structured');
    await app.init();
    try {
      const client = await pool.connect();
      let id: string;
      try {
        await client.query('BEGIN');
        [id] = await app.get(OutboxPublisher).add(client, {
          type: 'parcels.parcel-registered',
          aggregateType: 'Parcel',
          aggregateId: 'parcel-9',
          occurredAt: new Date('2026-11-26T08:00:00.000Z'),
          headers: { 'x-request-id': 'req-9' },
          payload: { parcelId: 'parcel-9', weightGrams: 1200 },
        });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      const got = await waitFor('the CloudEvent on the subject', () => received.find(({ event }) => event.id === id), 15_000);
      expect(got.event).toMatchObject({
        specversion: '1.0',
        id,
        type: 'parcels.parcel-registered',
        source: 'urn:shop:parcels',
        subject: 'parcel-9',
        time: '2026-11-26T08:00:00.000Z',
        data: { parcelId: 'parcel-9', weightGrams: 1200 },
        eventversion: 1,
        aggregatetype: 'Parcel',
      });
      expect(got.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
      expect(got.headers['x-request-id']).toBe('req-9');
    } finally {
      await app.close();
    }
  });

  it('refuses binary mode at bootstrap, naming the option, the transport and what to use instead', async () => {
    const app = await appWith('cloudevents-binary');
    const starting = app.init();
    await expect(starting).rejects.toThrow(OutboxConfigurationError);
    await expect(starting).rejects.toThrow(/"envelope.format" asks for 'cloudevents-binary' on the transport "nats-jetstream".*Use 'cloudevents-structured' there/);
    await app.close().catch(() => undefined);
  });
});
