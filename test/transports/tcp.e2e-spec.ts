import { Transport, type TcpContext } from '@nestjs/microservices';
import { describeTransportContract } from './transport-contract';

describeTransportContract({
  name: 'tcp',
  // No broker: the consumer is a Nest TCP microservice on a free loopback port.
  services: [],
  topic: (suffix) => `parcels-${suffix}`,
  producer: (run) => ({ name: 'PARCEL_EVENTS', transport: Transport.TCP, options: { host: '127.0.0.1', port: run.port } }),
  consumer: (run) => ({ transport: Transport.TCP, options: { host: '127.0.0.1', port: run.port } }),
  metadata: {
    // The context holds the socket, the pattern and Nest's packet metadata, which the outbox leaves empty.
    read: (context) => {
      const tcp = context as TcpContext;
      return { headers: {}, properties: { pattern: tcp.getPattern(), packetMetadata: tcp.getMetadata() } };
    },
    headers: 'none',
    expectedProperties: (_envelope, run) => ({ pattern: run.topic, packetMetadata: undefined }),
  },
  acknowledgement: 'none',
  outage: {
    // "The broker" is the consumer itself: close it, and start a new one on the same port.
    broker: (run) => ({ stop: () => run.stopConsumer(), start: () => run.startConsumer() }),
    lastError: /ECONNREFUSED/,
    // While nobody listens the connection is refused, so every publish fails and is retried.
    delivery: 'all',
  },
});
