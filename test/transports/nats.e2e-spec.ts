import { Transport, type ClientOptions } from '@nestjs/microservices';
import { natsConnection as connection, natsHeadersOf } from './nats.connection';
import { describeTransportContract, serviceOutage } from './transport-contract';


describeTransportContract({
  name: 'nats',
  services: ['nats'],
  topic: (suffix) => `outbox-contract.${suffix}.parcels`,
  producer: (run) => ({ name: 'PARCEL_EVENTS', transport: Transport.NATS, options: connection(run, 'producer') }),
  consumer: (run) => ({ transport: Transport.NATS, options: connection(run, 'consumer') }),
  metadata: {
    read: (context) => {
      const { headers, subject } = natsHeadersOf(context);
      return { key: headers['outbox-key'], headers, properties: { subject } };
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
