import { randomBytes } from 'node:crypto';
import { ConfluentKafkaTransport } from '@nest-outbox/outbox/kafka';
import { KafkaBrokerControl } from '../support/kafka-broker.control';
import { publishedBeforeOutage, startOutageApp, type OutageApp } from '../support/kafka-outage.app';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

interface Row {
  aggregate_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

// A Nest app relaying through ConfluentKafkaTransport while the shared Kafka test broker goes away
// and comes back (so this file runs alone: scripts/test.sh, phase 2). Read back with kafkajs, by a
// reader that is stopped before the outage and a new one after it (see publishedBeforeOutage).
describe('ConfluentKafkaTransport across a broker outage (relay in a Nest app, Kafka test broker)', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `parcels-ckjs-outage-${suffix}`;
  let app: OutageApp;
  let reader: KafkaTopicReader | undefined;
  let brokers: string[];
  const broker = new KafkaBrokerControl();

  beforeAll(async () => {
    brokers = requireService('kafka').split(',');
    // librdkafka gives up on a message (2.5 s) before the relay does (3 s), as the option's documentation asks.
    app = await startOutageApp('ckjs-outage', topic, new ConfluentKafkaTransport({ brokers, clientId: `outage-${suffix}`, deliveryTimeoutMs: 2_500 }));
  });

  afterAll(() => closeAll(() => reader?.stop(), () => app?.close()));

  const rowsOf = async (ids: Set<string>): Promise<Row[]> =>
    ((await app.dataSource.query(`SELECT * FROM outbox_messages ORDER BY position`)) as Row[]).filter((row) => ids.has(row.aggregate_id));

  it('records failed attempts while the broker is down, then delivers every event once it is back, in order per aggregate', async () => {
    const { dataSource } = app;
    const { parcel: before } = await publishedBeforeOutage(app, brokers, topic);

    const during = [Parcel.register('during-a', 2), Parcel.register('during-b', 3), Parcel.register('during-c', 4)];
    for (const parcel of during) parcel.relabel(`${parcel.label}-relabelled`);
    const ids = new Set(during.map((parcel) => parcel.id));
    await broker.stop();
    try {
      await dataSource.transaction((manager) => manager.save(during));
      const failed = await waitFor(
        'a failed attempt on each aggregate’s first row',
        async () => {
          const rows = await rowsOf(ids);
          return rows.length === 6 && during.every((parcel) => rows.some((row) => row.aggregate_id === parcel.id && row.attempts >= 1 && row.last_error !== null)) && rows;
        },
        20_000,
      );
      expect(failed.every((row) => row.status === 'pending')).toBe(true);
      expect(failed.filter((row) => row.last_error !== null).map((row) => row.last_error)).toEqual(
        failed.filter((row) => row.last_error !== null).map(() => expect.stringMatching(/^kafka: (the broker did not acknowledge the message: .*Message timed out|no acknowledgement within publishTimeoutMs)/)),
      );
    } finally {
      await broker.start();
    }

    const published = await waitFor('every row of the outage published', async () => {
      const rows = await rowsOf(ids);
      return rows.every((row) => row.status === 'published') && rows;
    }, 60_000);
    expect(published).toHaveLength(6);
    const second = new KafkaTopicReader(brokers, topic);
    reader = second;
    await second.start();
    for (const parcel of during) {
      const types = await waitFor(`both events of ${parcel.label}`, () => second.forKey(parcel.id).length >= 2 && second.forKey(parcel.id).map((record) => record.headers['outbox-event-type']), 30_000);
      // A retry may repeat a message (at least once); what arrives first keeps the order of the events.
      const firstSeen = types.filter((type, index) => types.indexOf(type) === index);
      expect(firstSeen).toEqual(['parcels.parcel-registered', 'parcels.parcel-relabelled']);
      expect(new Set(second.forKey(parcel.id).map((record) => record.partition)).size).toBe(1);
    }

    const after = Parcel.register('after', 5);
    await dataSource.getRepository(Parcel).save(after);
    await waitFor('the event saved after the outage', () => second.forKey(after.id).length === 1, 20_000);
    expect(second.forKey(before.id)).toHaveLength(1);
  });
});
