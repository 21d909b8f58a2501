import { newKafka, wallNow } from '../support/env';

/**
 * A Kafka consumer in a process of its own, so that it does not share an event loop with what it
 * measures. `latency`: reports [key, receive time] for every record; `order`: checks that each
 * key's `payload.seq` arrives in order and counts violations and duplicates.
 */
interface Config {
  brokers: string[];
  topic: string;
  mode: 'latency' | 'order';
  maxWaitTimeInMs?: number;
}

const config = JSON.parse(process.argv[2]) as Config;
const send = (message: Record<string, unknown>) => process.send?.(message);

const received: Array<[string, number]> = [];
const lastSeq = new Map<string, number>();
const seen = new Set<string>();
const order = { records: 0, distinct: 0, violations: 0, duplicates: 0, examples: [] as string[] };

async function main(): Promise<void> {
  const kafka = newKafka(config.brokers, `bench-consumer-${process.pid}`);
  const consumer = kafka.consumer({
    groupId: `bench-${config.topic}-${process.pid}`,
    allowAutoTopicCreation: true,
    maxWaitTimeInMs: config.maxWaitTimeInMs ?? 2,
    sessionTimeout: 6_000,
    rebalanceTimeout: 6_000,
    heartbeatInterval: 1_000,
  });
  consumer.on(consumer.events.GROUP_JOIN, () => send({ type: 'ready' }));
  await consumer.connect();
  await consumer.subscribe({ topic: config.topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const now = wallNow();
      for (const message of batch.messages) {
        const key = message.key?.toString() ?? '';
        if (key.startsWith('__')) continue;
        if (config.mode === 'latency') {
          received.push([key, now]);
        } else {
          checkOrder(key, message.value?.toString() ?? 'null');
        }
      }
    },
  });
  const flush = setInterval(() => {
    if (received.length > 0) send({ type: 'received', items: received.splice(0) });
  }, 50);

  process.on('message', async (message: { type: string }) => {
    if (message.type === 'report') send({ type: 'report', ...order });
    if (message.type === 'stop') {
      clearInterval(flush);
      if (received.length > 0) send({ type: 'received', items: received.splice(0) });
      await consumer.disconnect().catch(() => undefined);
      process.exit(0);
    }
  });
}

function checkOrder(key: string, value: string): void {
  order.records++;
  const seq = Number((JSON.parse(value) as { payload?: { seq?: number } }).payload?.seq);
  const id = `${key}#${seq}`;
  if (seen.has(id)) {
    order.duplicates++;
    return;
  }
  seen.add(id);
  order.distinct++;
  const last = lastSeq.get(key) ?? -1;
  if (seq < last) {
    order.violations++;
    if (order.examples.length < 5) order.examples.push(`${key}: seq ${seq} after ${last}`);
  } else {
    lastSeq.set(key, seq);
  }
}

main().catch((error: unknown) => {
  send({ type: 'error', error: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
});
