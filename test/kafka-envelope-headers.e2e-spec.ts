import { randomBytes } from 'node:crypto';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { KafkaTopicReader } from './support/kafka-topic.reader';
import { Parcel } from './support/parcel.fixtures';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';
import { walSandbox, type WalSandbox } from './support/wal.harness';

/**
 * `envelope.headers` trims the `outbox-*` headers, never the body: a consumer reading the topic
 * finds only the headers asked for, and the whole envelope in the value, in either delivery mode.
 */
describe.each([
  ['table', 'none', []],
  ['wal', 'id-and-type', ['outbox-event-type', 'outbox-message-id']],
] as const)('envelope.headers on Kafka, %s mode, %s', (delivery, headers, expectedOutboxHeaders) => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `envelope-headers-${delivery}-${suffix}`;
  let sandbox: WalSandbox;
  let reader: KafkaTopicReader;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox(`env_headers_${delivery}`);
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    const app = await sandbox.start(
      { delivery, transport: 'KAFKA', resolveTopic: () => topic, pollIntervalMs: 200, envelope: { headers } },
      {
        imports: [
          ClientsModule.register([
            { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `headers-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } },
          ]),
        ],
      },
    );
    const parcels = Array.from({ length: 5 }, (_, index) => Parcel.register(`headers-${index}`, index));
    await app.dataSource.transaction((manager) => manager.save(parcels));
  });

  afterAll(async () => {
    await reader?.stop();
    await sandbox?.drop();
  });

  it('sends only the outbox-* headers asked for, and the whole envelope in the value', async () => {
    await waitFor('5 records on the topic', () => reader.records.length >= 5, 30_000);
    for (const record of reader.records) {
      expect(Object.keys(record.headers).filter((name) => name.startsWith('outbox-')).sort()).toEqual(expectedOutboxHeaders);
      expect(record.value).toMatchObject({ type: 'parcels.parcel-registered', aggregateType: 'parcel', version: 1, occurredAt: expect.any(String), payload: { parcelId: expect.any(String) } });
      if (headers === 'id-and-type') expect(record.headers['outbox-message-id']).toBe(record.value.id);
    }
  });
});
