#!/usr/bin/env node
// Shows what kafkajs 2.2.4 consumers meet on a Kafka broker (docs/development.md, "The Kafka mock and
// kafkajs consumers"). Usage: node scripts/kafka-mock/show-client-edges.cjs HOST:PORT leave|sync [ROUNDS]|autocreate
//   leave       one consumer joins a group and disconnects: prints what kafkajs logged at ERROR (LeaveGroup)
//   sync        ROUNDS (default 6) of four consumers of one group joining at once: prints each round's crashes (SyncGroup)
//   autocreate  a consumer subscribes to a new topic with allowAutoTopicCreation true, then false: was it created?
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [address, edge, rounds = '6'] = process.argv.slice(2);
if (!/^.+:\d+$/.test(address ?? '') || !['leave', 'sync', 'autocreate'].includes(edge)) {
  console.error('usage: node scripts/kafka-mock/show-client-edges.cjs HOST:PORT leave|sync [ROUNDS]|autocreate');
  process.exit(2);
}
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const errors = [];
const kafka = new Kafka({
  clientId: 'show-client-edges',
  brokers: [address],
  logLevel: logLevel.ERROR,
  logCreator: () => ({ namespace, log }) => errors.push(`${namespace}: ${log.message} ${log.error ?? ''}`.trim()),
});
const unique = (name) => `${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const groupSettings = { sessionTimeout: 6_000, rebalanceTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 };

async function leave() {
  const topic = unique('edge-leave');
  const consumer = kafka.consumer({ groupId: `${topic}-group`, ...groupSettings });
  const joined = new Promise((resolve) => consumer.on(consumer.events.GROUP_JOIN, resolve));
  await consumer.connect();
  await consumer.subscribe({ topic });
  await consumer.run({ eachMessage: async () => undefined });
  await joined;
  await consumer.disconnect();
  console.log(errors.length ? `disconnect logged:\n  ${errors.join('\n  ')}` : 'disconnect logged no error');
}

async function sync() {
  const topic = unique('edge-sync');
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: 'x' }] });
  await producer.disconnect();
  for (let round = 1; round <= Number(rounds); round++) {
    const consumers = Array.from({ length: 4 }, () => kafka.consumer({ groupId: `${topic}-group-${round}`, ...groupSettings }));
    const crashes = [];
    await Promise.all(
      consumers.map(async (consumer) => {
        consumer.on(consumer.events.CRASH, ({ payload }) => crashes.push(`${payload.error.type ?? payload.error.name} (restart: ${payload.restart})`));
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ eachMessage: async () => undefined });
      }),
    );
    await sleep(8_000); // the group's first join takes ~3 s on the mock; a crash comes with its SyncGroup
    console.log(`round ${round}: ${crashes.length ? `${crashes.length} consumer(s) crashed: ${crashes.join(', ')}` : 'no crash'}`);
    await Promise.all(consumers.map((consumer) => consumer.disconnect()));
  }
}

async function autocreate() {
  const admin = kafka.admin();
  await admin.connect();
  for (const allowAutoTopicCreation of [true, false]) {
    const topic = unique('edge-autocreate');
    const consumer = kafka.consumer({ groupId: `${topic}-group`, allowAutoTopicCreation });
    await consumer.connect();
    const subscribed = await consumer.subscribe({ topic }).then(() => 'subscribed', (error) => `subscribe failed: ${error.message}`);
    console.log(`allowAutoTopicCreation ${allowAutoTopicCreation}: ${subscribed}; topic created: ${(await admin.listTopics()).includes(topic)}`);
    await consumer.disconnect();
  }
  await admin.disconnect();
}

({ leave, sync, autocreate })[edge]().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
