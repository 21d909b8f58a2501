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
      client: { clientId: `${broker.clientId}-consumer`, brokers: broker.brokers },
      consumer: { groupId: broker.groupId, allowAutoTopicCreation: true },
      subscribe: { fromBeginning: true },
    },
  };
}
