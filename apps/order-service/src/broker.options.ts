import { Transport, type ClientProviderOptions, type MicroserviceOptions } from '@nestjs/microservices';
import type { BrokerConfig } from './config/order-service.config';

export const ORDER_EVENTS_CLIENT = 'ORDER_EVENTS_CLIENT';

/** The client the outbox relay publishes through. */
export function orderEventsClient(broker: BrokerConfig): ClientProviderOptions {
  if (broker.transport === 'tcp') {
    return { name: ORDER_EVENTS_CLIENT, transport: Transport.TCP, options: { host: broker.host, port: broker.port } };
  }
  return {
    name: ORDER_EVENTS_CLIENT,
    transport: Transport.KAFKA,
    options: {
      // Few, short client-side retries: the outbox relay owns retrying, with backoff and a record of each attempt.
      client: { clientId: broker.clientId, brokers: broker.brokers, retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 } },
      producer: { allowAutoTopicCreation: true },
      producerOnlyMode: true,
      // acks -1: the broker answers once all in-sync replicas have the record.
      send: { acks: -1 },
    },
  };
}

/** The consuming side, connected to the same app as a microservice. */
export function orderEventsConsumer(broker: BrokerConfig): MicroserviceOptions {
  if (broker.transport === 'tcp') {
    return { transport: Transport.TCP, options: { host: broker.host, port: broker.port } };
  }
  return {
    transport: Transport.KAFKA,
    options: {
      // Keeps trying to reach the broker (for about an hour): the app serves HTTP meanwhile.
      client: { clientId: `${broker.clientId}-consumer`, brokers: broker.brokers, retry: { initialRetryTime: 300, maxRetryTime: 5_000, retries: 720 } },
      consumer: {
        groupId: broker.groupId,
        allowAutoTopicCreation: true,
        // kafkajs waits up to 5 s for data by default before answering a fetch: events would
        // arrive seconds after the relay published them. 100 ms shows the outbox's real latency.
        maxWaitTimeInMs: 100,
        // A crashed member's partitions are reassigned after the session timeout (30 s by default).
        sessionTimeout: 10_000,
        rebalanceTimeout: 10_000,
        heartbeatInterval: 1_000,
      },
      subscribe: { fromBeginning: true },
    },
  };
}
