import { randomBytes } from 'node:crypto';
import { ConfluentKafkaTransport } from '@nest-outbox/outbox/kafka';
import { KafkaBrokerControl } from '../support/kafka-broker.control';
import { drainedAfterOutage, outageRows, parcelsOfTheOutage, publishedBeforeOutage, startOutageApp, type OutageApp } from '../support/kafka-outage.app';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

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

  it('records failed attempts while the broker is down, then delivers every event once it is back, in order per aggregate', async () => {
    const { dataSource } = app;
    const { parcel: before } = await publishedBeforeOutage(app, brokers, topic);

    const outage = parcelsOfTheOutage();
    const { during, ids } = outage;
    await broker.stop();
    try {
      await dataSource.transaction((manager) => manager.save(during));
      const failed = await waitFor(
        'a failed attempt on each aggregate’s first row',
        async () => {
          const rows = await outageRows(app, ids);
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

    await drainedAfterOutage(app, outage, { brokers, topic, keep: (second) => (reader = second) });

    const after = Parcel.register('after', 5);
    await dataSource.getRepository(Parcel).save(after);
    await waitFor('the event saved after the outage', () => reader!.forKey(after.id).length === 1, 20_000);
    expect(reader!.forKey(before.id)).toHaveLength(1);
  });
});
