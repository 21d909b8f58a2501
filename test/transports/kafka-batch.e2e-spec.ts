import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { OutboxModule } from '@nest-outbox/outbox';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { parcelsOnSqlite } from '../support/sqlite-parcels';

describe('Kafka batches on the Kafka test broker', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `parcels-batch-${suffix}`;
  let dir: string;
  let module: TestingModule;
  let reader: KafkaTopicReader;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    dir = mkdtempSync(join(tmpdir(), 'outbox-kafka-batch-'));
    module = await Test.createTestingModule({
      imports: [
        parcelsOnSqlite(dir),
        ClientsModule.register([
          { name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `batch-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } },
        ]),
        // A long poll: the batch is claimed by the after-commit wake-up, all at once.
        OutboxModule.forRoot({ transport: 'KAFKA', resolveTopic: () => topic, batchSize: 500, pollIntervalMs: 60_000 }),
      ],
    }).compile();
    module.useLogger(false);
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    await module.init();
  });

  afterAll(async () => {
    await reader?.stop();
    await module?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes a claimed batch of 200 aggregates with their keys and headers, each row once', async () => {
    const parcels = Array.from({ length: 200 }, (_, i) => Parcel.register(`batch-${i}`, i));
    await module.get(DataSource).getRepository(Parcel).save(parcels);
    await waitFor('200 records on the topic', () => reader.records.length >= 200, 30_000);
    expect(reader.records).toHaveLength(200);
    for (const parcel of parcels) {
      const [record] = reader.forKey(parcel.id);
      expect(record.headers['outbox-aggregate-id']).toBe(parcel.id);
      expect(record.value).toMatchObject({ aggregateId: parcel.id, payload: { parcelId: parcel.id } });
    }
    const [{ published }] = await module.get(DataSource).query(`SELECT count(*) AS published FROM outbox_messages WHERE status = 'published' AND attempts = 1`);
    expect(published).toBe(200);
  });
});
