import { randomUUID } from 'node:crypto';
import { describeOutboxTransportContract, RecordingOutboxTransport } from '@nest-outbox/outbox/testing';

// The recording transport is its own broker: what it keeps is what "arrived".
const created: RecordingOutboxTransport[] = [];
const open = (transport: RecordingOutboxTransport) => {
  created.push(transport);
  return { transport, close: async () => undefined };
};

describeOutboxTransportContract({
  name: 'RecordingOutboxTransport',
  createTransport: async () => open(new RecordingOutboxTransport()),
  openDestination: async () => {
    const name = `destination-${randomUUID()}`;
    return {
      name,
      received: async () =>
        created.flatMap((transport) => transport.published).filter((message) => message.destination === name).map(({ envelope, key, headers }) => ({ envelope, key, headers })),
      close: async () => undefined,
    };
  },
  batching: 'none',
  carries: { key: true, headers: true },
  // failNext is how this transport plays a broker that is down.
  unreachable: {
    createTransport: async () => {
      const transport = new RecordingOutboxTransport();
      transport.failNext(Number.MAX_SAFE_INTEGER);
      return open(transport);
    },
  },
});
