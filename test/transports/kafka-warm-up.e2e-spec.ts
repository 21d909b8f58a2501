import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { ClientKafka, ClientsModule, Transport } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { OutboxModule } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { parcelsOnSqlite } from '../support/sqlite-parcels';

// What a kafkajs producer asks the broker, by API name ('Metadata', 'Produce', …), from now on.
function recordRequests(client: ClientKafka): string[] {
  const requests: string[] = [];
  client.producer.on(client.producer.events.REQUEST, (event) => requests.push(event.payload.apiName));
  return requests;
}

function messageTo(topic: string): OutgoingMessage {
  const id = randomBytes(8).toString('hex');
  return { id, destination: topic, key: `parcel-${id}`, envelope: { id }, headers: { 'outbox-id': id } } as unknown as OutgoingMessage;
}

describe('Kafka transports warmed at start-up (kafkajs through ClientKafka, on the Kafka test broker)', () => {
  const suffix = randomBytes(4).toString('hex');
  let brokers: string[];
  const clients: ClientKafka[] = [];
  const kafkaClient = () => {
    const client = new ClientKafka({ client: { clientId: `warm-up-${suffix}`, brokers, logLevel: 0 }, producerOnlyMode: true, send: { acks: -1 } });
    clients.push(client);
    return client;
  };

  beforeAll(() => {
    brokers = requireService('kafka').split(',');
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
  });

  it("without destinations, the first publish to a topic asks for the topic's metadata before producing (what the warm-up saves)", async () => {
    const client = kafkaClient();
    const transport = new ClientProxyTransport(client);
    await transport.connect();
    const requests = recordRequests(client);

    const [failure] = await transport.publishBatch!([messageTo(`warm-up-cold-${suffix}`)]);

    expect(failure).toBeUndefined();
    expect(requests.indexOf('Metadata')).toBeGreaterThanOrEqual(0);
    expect(requests.indexOf('Metadata')).toBeLessThan(requests.indexOf('Produce'));
  });

  it('connected with its destinations, the first publish to them is one produce request, no metadata round trip', async () => {
    const topics = [`warm-up-a-${suffix}`, `warm-up-b-${suffix}`];
    const client = kafkaClient();
    const transport = new ClientProxyTransport(client);
    await transport.connect(topics);
    const requests = recordRequests(client);

    const outcomes = await transport.publishBatch!(topics.map(messageTo));

    expect(outcomes).toEqual([undefined, undefined]);
    expect(requests).not.toContain('Metadata');
    expect(requests).toContain('Produce');
  });

  it("an app's relay starts with the declared topics' metadata fetched: its first batch goes out without a metadata request", async () => {
    const topic = `warm-up-app-${suffix}`;
    const dir = mkdtempSync(join(tmpdir(), 'outbox-kafka-warm-up-'));
    const reader = new KafkaTopicReader(brokers, topic);
    let module: TestingModule | undefined;
    try {
      module = await Test.createTestingModule({
        imports: [
          parcelsOnSqlite(dir),
          ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId: `warm-up-app-${suffix}`, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]),
          // resolveTopic answers for the declared event types: the topic is known at bootstrap.
          OutboxModule.forRoot({ transport: 'KAFKA', resolveTopic: () => topic, pollIntervalMs: 60_000 }),
        ],
      }).compile();
      module.useLogger(false);
      await reader.start();
      await module.init();
      const requests = recordRequests(module.get<ClientKafka>('KAFKA'));

      await module.get(DataSource).getRepository(Parcel).save(Parcel.register('warm-up', 1));

      await waitFor('the parcel on the topic', () => reader.records.length >= 1, 30_000);
      expect(requests).toContain('Produce');
      expect(requests).not.toContain('Metadata');
    } finally {
      await reader.stop();
      await module?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
