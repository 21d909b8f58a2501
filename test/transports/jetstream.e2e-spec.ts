import { Transport, type ClientOptions } from '@nestjs/microservices';
import { JetStreamTransport } from '@nest-outbox/outbox';
import { natsConnection as connection, natsHeadersOf } from './nats.connection';
import { describeTransportContract, serviceOutage } from './transport-contract';

// The producer is the library's JetStreamTransport (publish acks from a stream); the consumer is a
// plain Nest NATS microservice, which receives what the stream captures on the same subject.
describeTransportContract({
  name: 'nats-jetstream',
  services: ['nats'],
  topic: (suffix) => `outbox-js.${suffix}.parcels`,
  producer: (run) => ({
    token: 'JETSTREAM_TRANSPORT',
    providers: [
      {
        provide: 'JETSTREAM_TRANSPORT',
        useFactory: () =>
          new JetStreamTransport({
            servers: run.url('nats'),
            stream: { name: `OUTBOX_${run.suffix.toUpperCase()}`, subjects: [run.topic] },
            connectionOptions: { reconnectTimeWait: 250 },
          }),
      },
    ],
  }),
  consumer: (run) => ({ transport: Transport.NATS, options: connection(run, 'consumer') }),
  metadata: {
    read: (context) => {
      const { headers, subject, raw } = natsHeadersOf(context, ['Nats-Msg-Id']);
      return { key: headers['outbox-key'], headers, properties: { subject, messageId: raw?.get('Nats-Msg-Id') } };
    },
    headers: 'envelope',
    // The message id doubles as JetStream's deduplication id.
    expectedProperties: (envelope, run) => ({ subject: run.topic, messageId: envelope.id }),
  },
  acknowledgement: 'broker',
  outage: {
    broker: serviceOutage('nats'),
    lastError: /CONNECTION_REFUSED|ECONNREFUSED|Connection|TIMEOUT|timeout|no acknowledgement within|503|disconnect|closed/i,
    // The stream keeps everything, but this consumer is a core subscriber: it gets what is
    // published while it is subscribed (a JetStream consumer would replay the rest from the stream).
    delivery: 'subscribed-only',
    probe: (run): ClientOptions => ({ transport: Transport.NATS, options: connection(run, 'probe') }),
  },
});
