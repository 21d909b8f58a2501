import { Transport, type ClientProviderOptions, type MicroserviceOptions } from '@nestjs/microservices';
import { settings } from './settings.js';

export const EVENTS_CLIENT = 'EVENTS_CLIENT';

/** The client the outbox relay publishes through. */
export function eventsClient(): ClientProviderOptions {
  if (!settings.kafkaBrokers) {
    return { name: EVENTS_CLIENT, transport: Transport.TCP, options: { port: settings.tcpPort } };
  }
  return {
    name: EVENTS_CLIENT,
    transport: Transport.KAFKA,
    options: {
      client: { clientId: 'shop', brokers: settings.kafkaBrokers },
      producerOnlyMode: true,
      send: { acks: -1 }, // acknowledged once every in-sync replica has the record
    },
  };
}

/** The consumer, started inside the same app with connectMicroservice (main.ts). */
export function eventsConsumer(): MicroserviceOptions {
  if (!settings.kafkaBrokers) {
    return { transport: Transport.TCP, options: { port: settings.tcpPort } };
  }
  return {
    transport: Transport.KAFKA,
    options: {
      client: { clientId: 'shop-consumer', brokers: settings.kafkaBrokers },
      // Nest appends '-server' to this groupId: the group is 'shop-shipping-server'.
      // kafkajs lets the broker hold a fetch up to 5 s while no record is there; 100 ms shows events
      // as soon as they arrive, for a few more idle fetches. sessionTimeout (kafkajs: 30 s) is how
      // long a stopped member may still hold the group, so it bounds the wait of a restart.
      consumer: { groupId: 'shop-shipping', maxWaitTimeInMs: 100, sessionTimeout: 10_000 },
      subscribe: { fromBeginning: true },
    },
  };
}
