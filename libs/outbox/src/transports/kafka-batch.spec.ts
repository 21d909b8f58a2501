import type { ClientKafka } from '@nestjs/microservices';
import type { OutgoingMessage } from '../core/outbox-message';
import { publishKafkaBatch } from './kafka-batch';

function outgoing(destination: string, key: string): OutgoingMessage {
  return {
    destination,
    key,
    headers: { 'outbox-event-type': 'thing.happened' },
    envelope: { id: `id-${key}`, type: 'thing.happened', version: 1, aggregateType: 'thing', aggregateId: key, occurredAt: 'now', headers: {}, payload: {} },
  };
}

describe('publishKafkaBatch', () => {
  it('sends one produce call per topic with keys, headers and acks -1, and fails only the topic that failed', async () => {
    const sent: Array<{ topic: string; acks?: number; messages: Array<{ key: string; headers: object }> }> = [];
    const producer = {
      send: async (record: { topic: string; acks?: number; messages: Array<{ key: string; headers: object }> }) => {
        sent.push(record);
        if (record.topic === 'broken') throw new Error('UNKNOWN_TOPIC_OR_PARTITION');
        return [];
      },
    };
    const client = { connect: async () => producer } as unknown as ClientKafka;

    const outcomes = await publishKafkaBatch(client, [outgoing('orders', 'a'), outgoing('broken', 'b'), outgoing('orders', 'c')]);

    expect(sent.map((record) => [record.topic, record.acks, record.messages.map((m) => m.key)])).toEqual([
      ['orders', -1, ['a', 'c']],
      ['broken', -1, ['b']],
    ]);
    expect(sent[0].messages[0].headers).toEqual({ 'outbox-event-type': 'thing.happened' });
    expect(outcomes.map((outcome) => outcome?.message)).toEqual([undefined, 'UNKNOWN_TOPIC_OR_PARTITION', undefined]);
  });
});
