import { randomBytes } from 'node:crypto';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/** The WAL delivery publishes through the same transports as the table: a CloudEvents destination gets CloudEvents there too. */
describe('CloudEvents in the WAL delivery mode: PostgreSQL slot → Kafka test broker', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `parcels-ce-wal-${suffix}`;
  let sandbox: WalSandbox;
  let reader: KafkaTopicReader;
  let app: WalApp;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox('ce_wal');
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    app = await sandbox.start(
      { transport: 'KAFKA', resolveTopic: () => topic, envelope: { source: '/parcels', destinations: { [topic]: 'cloudevents-binary' } } },
      {
        imports: [
          ClientsModule.register([
            { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `ce-wal-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } },
          ]),
        ],
      },
    );
  });

  afterAll(async () => {
    await reader?.stop();
    await sandbox?.drop();
  });

  it('streams saved aggregates as binary CloudEvents: ce_* headers, the payload as the body', async () => {
    const parcels = Array.from({ length: 5 }, (_, i) => Parcel.register(`ce-wal-${i}`, i));
    await app.dataSource.getRepository(Parcel).save(parcels);
    await waitFor('5 records on the topic', () => reader.records.length >= 5, 30_000);
    for (const parcel of parcels) {
      const [record] = reader.forKey(parcel.id);
      expect(record.headers).toMatchObject({ ce_specversion: '1.0', ce_type: 'parcels.parcel-registered', ce_source: '/parcels', ce_subject: parcel.id, ce_aggregatetype: expect.any(String) });
      expect(record.headers.ce_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(record.headers['outbox-message-id']).toBeUndefined();
      expect(record.value).toMatchObject({ parcelId: parcel.id });
      expect(record.value.type).toBeUndefined();
    }
  });
});
