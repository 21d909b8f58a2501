import { randomBytes } from 'node:crypto';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { staysAtMostAfterGrace, waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

describe('WAL delivery mode end to end: PostgreSQL slot → Kafka test broker', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `parcels-wal-${suffix}`;
  let sandbox: WalSandbox;
  let reader: KafkaTopicReader;
  let app: WalApp;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox('wal_kafka');
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    app = await sandbox.start(
      { transport: 'KAFKA', resolveTopic: () => topic, batchSize: 200 },
      {
        imports: [
          ClientsModule.register([
            { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `wal-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } },
          ]),
        ],
      },
    );
  });

  afterAll(async () => {
    await reader?.stop();
    await sandbox?.drop();
  });

  it('publishes saved aggregates with key, headers and envelope, each once, in the order each was changed', async () => {
    const repository = app.dataSource.getRepository(Parcel);
    const parcels = Array.from({ length: 100 }, (_, i) => Parcel.register(`wal-kafka-${i}`, i));
    await repository.save(parcels);
    for (const parcel of parcels.slice(0, 20)) {
      parcel.relabel(`${parcel.label}-again`);
      await repository.save(parcel);
    }
    await waitFor('120 records on the topic', () => reader.records.length >= 120, 30_000);
    // No outage: not one copy more, also a while after the last one arrived.
    await staysAtMostAfterGrace('records on the topic', () => reader.records.length, 120);
    expect(reader.records).toHaveLength(120);
    for (const [index, parcel] of parcels.entries()) {
      const records = reader.forKey(parcel.id);
      expect(records[0].headers['outbox-aggregate-id']).toBe(parcel.id);
      expect(records[0].value).toMatchObject({ type: 'parcels.parcel-registered', aggregateId: parcel.id, payload: { parcelId: parcel.id } });
      expect(records.map((r) => r.value.type)).toEqual(index < 20 ? ['parcels.parcel-registered', 'parcels.parcel-relabelled'] : ['parcels.parcel-registered']);
    }
  });
});
