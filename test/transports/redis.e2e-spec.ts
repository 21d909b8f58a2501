import { Transport, type ClientOptions, type RedisContext } from '@nestjs/microservices';
import { describeTransportContract, serviceOutage, type TransportRun } from './transport-contract';

// Nest's Redis client only reconnects with retryAttempts set; 200 ms apart keeps the outage test short.
// The probe client retries every 20 ms, so that a probe arrives as soon as the consumer is subscribed again.
const connection = (run: TransportRun, retryDelay = 200) => {
  const url = new URL(run.url('redis'));
  return { host: url.hostname, port: Number(url.port), retryAttempts: 10_000, retryDelay };
};

describeTransportContract({
  name: 'redis',
  services: ['redis'],
  topic: (suffix) => `outbox-contract:${suffix}:parcels`,
  producer: (run) => ({ name: 'PARCEL_EVENTS', transport: Transport.REDIS, options: connection(run) }),
  consumer: (run) => ({ transport: Transport.REDIS, options: connection(run) }),
  metadata: {
    // A Redis pub/sub message is a channel and a body; the context adds Nest's packet metadata, which the outbox leaves empty.
    read: (context) => {
      const redis = context as RedisContext;
      return { headers: {}, properties: { channel: redis.getChannel(), packetMetadata: redis.getMetadata() } };
    },
    headers: 'none',
    expectedProperties: (_envelope, run) => ({ channel: run.topic, packetMetadata: undefined }),
  },
  acknowledgement: 'none',
  outage: {
    broker: serviceOutage('redis'),
    lastError: /Connection lost|ECONNREFUSED|Connection is closed|no acknowledgement within/,
    // Pub/sub keeps nothing for a subscriber that is not connected.
    delivery: 'subscribed-only',
    probe: (run): ClientOptions => ({ transport: Transport.REDIS, options: connection(run, 20) }),
  },
});
