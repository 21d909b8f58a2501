import type { OutgoingMessage } from './outbox-message';

/**
 * Publishes a batch whose messages a wrapping transport has shaped (a CloudEvent, a payload in a
 * registry's wire format), each as a message or as the error that refused it. A refused message
 * fails alone; the later messages of its aggregate and destination in the batch wait for the next
 * attempt, so that none overtakes it.
 */
export async function publishShapedBatch(
  messages: readonly OutgoingMessage[],
  shaped: ReadonlyArray<OutgoingMessage | Error>,
  publishBatch: (messages: OutgoingMessage[]) => Promise<Array<Error | undefined>>,
): Promise<Array<Error | undefined>> {
  const outcomes = new Array<Error | undefined>(messages.length);
  const sendable: OutgoingMessage[] = [];
  const indexes: number[] = [];
  const failedKeys = new Set<string>();
  messages.forEach((message, index) => {
    const key = `${message.destination}\u0000${message.key}`;
    const result = shaped[index];
    if (failedKeys.has(key)) {
      outcomes[index] = new Error(`not sent: an earlier message of aggregate "${message.key}" to "${message.destination}" failed in this batch`);
    } else if (result instanceof Error) {
      outcomes[index] = result;
      failedKeys.add(key);
    } else {
      sendable.push(result);
      indexes.push(index);
    }
  });
  if (sendable.length > 0) {
    const sent = await publishBatch(sendable);
    indexes.forEach((index, at) => (outcomes[index] = sent[at]));
  }
  return outcomes;
}
