import { Transport, type RmqContext } from '@nestjs/microservices';
import { describeTransportContract, serviceOutage, stringHeaders, type TransportRun } from './transport-contract';

interface AmqpProperties {
  messageId?: string;
  type?: string;
  contentType?: string;
  deliveryMode?: number;
  timestamp?: number;
  headers?: Record<string, unknown>;
}

// A durable queue per run (removed by RabbitMQ once unused for 5 minutes); both sides must declare it alike.
const queue = (run: TransportRun) => ({
  urls: [run.url('rabbitmq')],
  queue: `outbox-contract-${run.suffix}`,
  queueOptions: { durable: true, arguments: { 'x-expires': 300_000 } },
  // Reconnect after 1 s instead of amqp-connection-manager's 5 s, to keep the outage test short.
  socketOptions: { reconnectTimeInSeconds: 1, heartbeatIntervalInSeconds: 5 },
});

describeTransportContract({
  name: 'rabbitmq',
  services: ['rabbitmq'],
  topic: (suffix) => `parcels.${suffix}`,
  producer: (run) => ({ name: 'PARCEL_EVENTS', transport: Transport.RMQ, options: queue(run) }),
  consumer: (run) => ({ transport: Transport.RMQ, options: queue(run) }),
  metadata: {
    read: (context) => {
      const { properties } = (context as RmqContext).getMessage() as { properties: AmqpProperties };
      const headers = stringHeaders(properties.headers);
      return {
        key: headers['outbox-key'],
        headers,
        properties: {
          messageId: properties.messageId,
          type: properties.type,
          contentType: properties.contentType,
          deliveryMode: properties.deliveryMode,
          timestamp: properties.timestamp,
        },
      };
    },
    headers: 'envelope',
    expectedProperties: (envelope) => ({
      messageId: envelope.id,
      type: envelope.type,
      contentType: 'application/json',
      deliveryMode: 2, // persistent
      timestamp: Math.floor(Date.parse(envelope.occurredAt) / 1000), // AMQP timestamps are POSIX seconds
    }),
  },
  acknowledgement: 'broker',
  outage: {
    broker: serviceOutage('rabbitmq'),
    lastError: /Connection lost|ECONNREFUSED|no acknowledgement within/,
    delivery: 'all',
  },
});
