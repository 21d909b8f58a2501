import type { ClientKafka } from '@nestjs/microservices';
import { bodyOf, type OutgoingMessage } from '../core/outbox-message';

interface KafkaSendOptions {
  acks?: number;
  timeout?: number;
  compression?: number;
}

/**
 * kafkajs asks the brokers for a topic's partitions and leaders on its first send to that topic,
 * and the send waits for the answer (retrying while an auto-created topic has no leader yet). A
 * send of no message does that and nothing else: no produce request goes out. A topic that does
 * not exist, or brokers that do not answer, are left for the first publish to report.
 */
export async function fetchKafkaTopicMetadata(client: ClientKafka, topics: readonly string[]): Promise<void> {
  const producer = await client.connect();
  const send = ((Reflect.get(client, 'options') as { send?: KafkaSendOptions } | undefined)?.send ?? {}) as KafkaSendOptions;
  await producer.sendBatch({ acks: send.acks ?? -1, topicMessages: [...new Set(topics)].map((topic) => ({ topic, messages: [] })) }).catch(() => undefined);
}

/**
 * Sends a claimed batch with one produce call per topic (kafkajs groups each call into one
 * request per broker). Topics fail independently, so a partial failure marks only the
 * messages of the topic that failed.
 */
export async function publishKafkaBatch(client: ClientKafka, messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
  const producer = await client.connect();
  const send = ((Reflect.get(client, 'options') as { send?: KafkaSendOptions } | undefined)?.send ?? {}) as KafkaSendOptions;
  const byTopic = new Map<string, number[]>();
  messages.forEach((message, index) => {
    const indexes = byTopic.get(message.destination);
    if (indexes) indexes.push(index);
    else byTopic.set(message.destination, [index]);
  });
  const outcomes = new Array<Error | undefined>(messages.length);
  await Promise.all(
    [...byTopic].map(async ([topic, indexes]) => {
      try {
        await producer.send({
          topic,
          acks: send.acks ?? -1,
          timeout: send.timeout,
          compression: send.compression,
          messages: indexes.map((index) => ({
            key: messages[index].key,
            value: messages[index].encoded ?? JSON.stringify(bodyOf(messages[index])),
            headers: messages[index].headers,
          })),
        });
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        indexes.forEach((index) => (outcomes[index] = failure));
      }
    }),
  );
  return outcomes;
}
