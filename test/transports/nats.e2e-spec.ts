import { Transport, type ClientOptions, type NatsContext } from '@nestjs/microservices';
import { describeTransportContract, serviceOutage, type TransportRun } from './transport-contract';

interface NatsHeaders {
  keys(): string[];
  get(name: string): string;
}

// Reconnect for ever, every 250 ms (the defaults give up after 10 attempts 2 s apart). The probe
// client retries every 20 ms, so that a probe arrives as soon as the consumer is subscribed again.
const connection = (run: TransportRun, role: 'producer' | 'consumer' | 'probe') => ({
  servers: run.url('nats'),
  name: `outbox-${role}-${run.suffix}`,
  maxReconnectAttempts: -1,
  reconnectTimeWait: role === 'probe' ? 20 : 250,
  ...(role === 'probe' ? { reconnectJitter: 0 } : {}),
});

describeTransportContract({
  name: 'nats',
  services: ['nats'],
  topic: (suffix) => `outbox-contract.${suffix}.parcels`,
  producer: (run) => ({ name: 'PARCEL_EVENTS', transport: Transport.NATS, options: connection(run, 'producer') }),
  consumer: (run) => ({ transport: Transport.NATS, options: connection(run, 'consumer') }),
  metadata: {
    read: (context) => {
      const natsHeaders = (context as NatsContext).getHeaders() as NatsHeaders | undefined;
      const headers = Object.fromEntries((natsHeaders?.keys() ?? []).map((name) => [name, natsHeaders!.get(name)]));
      return { key: headers['outbox-key'], headers, properties: { subject: (context as NatsContext).getSubject() } };
    },
    headers: 'envelope',
    expectedProperties: (_envelope, run) => ({ subject: run.topic }),
  },
  acknowledgement: 'none',
  outage: {
    broker: serviceOutage('nats'),
    lastError: /Connection lost|CONNECTION_REFUSED|ECONNREFUSED|no acknowledgement within/,
    // Core NATS keeps nothing for a subscriber that is not connected.
    delivery: 'subscribed-only',
    probe: (run): ClientOptions => ({ transport: Transport.NATS, options: connection(run, 'probe') }),
  },
});
