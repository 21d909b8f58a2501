import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer, type LogEntry } from 'kafkajs';
import { requireService, serviceEnv } from '../support/services';
import { waitFor } from '../support/wait-for';

/**
 * What kafkajs 2.2.4 consumers meet on the Kafka test broker (scripts/kafka-mock/), pinned here so
 * that a change of the mock's librdkafka shows (docs/development.md, "The Kafka mock and kafkajs consumers: whose bug is what").
 */
describe('Kafka test broker: kafkajs consumers', () => {
  const errors: string[] = [];
  const kafka = () =>
    new Kafka({
      clientId: 'mock-consumer-groups',
      brokers: [requireService('kafka')],
      logLevel: logLevel.ERROR,
      logCreator: () => (entry: LogEntry) => errors.push(`${entry.namespace}: ${entry.log.message} ${entry.log.error ?? ''}`.trim()),
    });
  const consumers: Consumer[] = [];
  beforeEach(() => void (errors.length = 0));
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.disconnect().catch(() => undefined)));
  });

  async function joined(groupId: string, topic: string): Promise<Consumer> {
    const consumer = kafka().consumer({ groupId, sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 100 });
    consumers.push(consumer);
    let onJoin!: () => void;
    const groupJoin = new Promise<void>((resolve) => (onJoin = resolve));
    consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async () => undefined });
    await waitFor(`the consumer to join ${groupId}`, () => Promise.race([groupJoin.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 100))]), 20_000);
    return consumer;
  }

  it('leaves its group on disconnect without an error (LeaveGroup)', async () => {
    const topic = `mock-leave-${randomBytes(4).toString('hex')}`;
    const consumer = await joined(`${topic}-group`, topic);
    await consumer.disconnect();
    // With LeaveGroup v3 (the 2.15.1 mock claimed v0-v4 and answered in v0-v2's layout) kafkajs logged
    // 'Response LeaveGroup(key: 13, version: 3) The value of "offset" is out of range' here.
    expect(errors).toEqual([]);
  }, 60_000);

  it("creates the topic a consumer asks about only when the consumer allows it (librdkafka 2.0.2's mock: always)", async () => {
    const built = serviceEnv().OUTBOX_TEST_KAFKA_MOCK_LIBRDKAFKA ?? 'unknown';
    const client = kafka();
    const admin = client.admin();
    await admin.connect();
    try {
      const outcome: Record<string, boolean> = {};
      for (const allowAutoTopicCreation of [true, false]) {
        const topic = `mock-autocreate-${allowAutoTopicCreation}-${randomBytes(4).toString('hex')}`;
        const consumer = client.consumer({ groupId: `${topic}-group`, allowAutoTopicCreation });
        consumers.push(consumer);
        await consumer.connect();
        await consumer.subscribe({ topic }).catch(() => undefined);
        outcome[`allow ${allowAutoTopicCreation}`] = (await admin.listTopics()).includes(topic);
      }
      // Metadata v4+ carries the client's AllowAutoTopicCreation; 2.0.2 serves v0-v2, which has none.
      const honoursTheClient = built !== '2.0.2';
      expect({ built, outcome }).toEqual({ built, outcome: { 'allow true': true, 'allow false': !honoursTheClient } });
    } finally {
      await admin.disconnect();
    }
  }, 60_000);
});
