import { randomBytes } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { connect, type ChannelModel } from 'amqplib';
import { DataSource } from 'typeorm';
import { OutboxModule } from '@nest-outbox/outbox';
import { KafkaBrokerControl } from './support/kafka-broker.control';
import { KafkaTopicReader } from './support/kafka-topic.reader';
import { Parcel } from './support/parcel.fixtures';
import { postgresAdmin as admin } from './support/databases';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';
import { postgresSchemaTypeOrm } from './support/capturing-app';

/**
 * One event, two destinations: the internal Kafka topic and a partner's RabbitMQ queue. Each
 * destination has its own rows, so Kafka being down must not hold back the partner.
 */
describe('an event routed to Kafka and to RabbitMQ', () => {
  const suffix = randomBytes(5).toString('hex');
  const topic = `parcels-${suffix}`;
  const partnerQueue = `partner-parcels-${suffix}`;
  const schema = `multi_${suffix}`;
  let module: TestingModule;
  let reader: KafkaTopicReader;
  let brokers: string[];
  let amqp: ChannelModel;
  const partnerReceived: Array<{ id: string; aggregateId: string; at: number }> = [];

  beforeAll(async () => {
    const postgres = requireService('postgres');
    brokers = requireService('kafka').split(',');
    const rabbitmq = requireService('rabbitmq');
    await admin(postgres, `CREATE SCHEMA ${schema}`);
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...postgresSchemaTypeOrm(postgres, schema), autoLoadEntities: true }),
        ClientsModule.register([
          {
            name: 'KAFKA',
            transport: Transport.KAFKA,
            options: { client: { clientId: `multi-${suffix}`, brokers, retry: { retries: 1, initialRetryTime: 100 } }, producerOnlyMode: true },
          },
          { name: 'PARTNER_RMQ', transport: Transport.RMQ, options: { urls: [rabbitmq], queue: partnerQueue, queueOptions: { durable: true } } },
        ]),
        OutboxModule.forRoot({
          transport: 'KAFKA',
          transports: { partner: 'PARTNER_RMQ' },
          routes: [{ events: ['parcels.parcel-registered'], transport: 'partner', topic: 'partner.parcel-registered' }],
          resolveTopic: () => topic,
          pollIntervalMs: 200,
          publishTimeoutMs: 3_000,
          leaseMs: 10_000,
          backoff: { initialMs: 200, maxMs: 1_000, jitter: 0 },
        }),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();

    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    amqp = await connect(rabbitmq);
    const channel = await amqp.createChannel();
    await channel.assertQueue(partnerQueue, { durable: true });
    await channel.consume(partnerQueue, (message) => {
      if (!message) return;
      const packet = JSON.parse(message.content.toString());
      partnerReceived.push({ id: packet.data.id, aggregateId: packet.data.aggregateId, at: Date.now() });
      channel.ack(message);
    });
  });

  afterAll(async () => {
    await reader?.stop();
    await amqp?.close();
    await module?.close();
    await admin(requireService('postgres'), `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  const rows = () =>
    module.get(DataSource).query(`SELECT transport, destination, status, attempts, aggregate_id FROM outbox_messages ORDER BY position`) as Promise<
      Array<{ transport: string; destination: string; status: string; attempts: number; aggregate_id: string }>
    >;

  it('writes one row per destination and delivers to both', async () => {
    const parcel = Parcel.register('both', 1);
    await module.get(DataSource).getRepository(Parcel).save(parcel);
    expect((await rows()).map((row) => [row.transport, row.destination])).toEqual([
      ['default', topic],
      ['partner', 'partner.parcel-registered'],
    ]);
    await waitFor('Kafka and the partner to receive the event', () => reader.forKey(parcel.id).length === 1 && partnerReceived.some((m) => m.aggregateId === parcel.id), 30_000);
  });

  it('keeps delivering to the partner while Kafka is down, and catches Kafka up afterwards', async () => {
    const broker = new KafkaBrokerControl();
    const parcels = [Parcel.register('down-1', 1), Parcel.register('down-2', 2), Parcel.register('down-3', 3)];
    let kafkaBack = 0;
    // The reader is an assertion tool and must not live through the outage: a kafkajs consumer that
    // did opens a connection to leave its group when stopped, which outlives its disconnect.
    await reader.stop();
    await broker.stop();
    try {
      await module.get(DataSource).getRepository(Parcel).save(parcels);
      await waitFor('the partner to receive all three while Kafka is down', () => parcels.every((p) => partnerReceived.some((m) => m.aggregateId === p.id)), 20_000);
      await waitFor('the Kafka rows to record failed attempts', async () => {
        const kafkaRows = (await rows()).filter((row) => row.transport === 'default' && parcels.some((p) => p.id === row.aggregate_id));
        return kafkaRows.length === 3 && kafkaRows.every((row) => row.status === 'pending' && row.attempts >= 1);
      }, 20_000);
    } finally {
      await broker.start();
      kafkaBack = Date.now();
      reader = new KafkaTopicReader(brokers, topic);
      await reader.start();
    }
    const partnerTimes = partnerReceived.filter((m) => parcels.some((p) => p.id === m.aggregateId)).map((m) => m.at);
    expect(Math.max(...partnerTimes)).toBeLessThan(kafkaBack);
    await waitFor('Kafka to receive all three after it came back', () => parcels.every((p) => reader.forKey(p.id).length >= 1), 60_000);
    expect((await rows()).every((row) => row.status === 'published')).toBe(true);
  });
});
