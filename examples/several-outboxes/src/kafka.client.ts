import { ClientsModule, Transport } from '@nestjs/microservices';
import { settings } from './settings.js';

/**
 * The Kafka client every outbox publishes through (`transport: 'KAFKA'` names it): registered once,
 * global, so that each OutboxModule finds it.
 */
export const KafkaClientModule = ClientsModule.register({
  isGlobal: true,
  clients: [
    {
      name: 'KAFKA',
      transport: Transport.KAFKA,
      options: {
        client: { clientId: 'regions', brokers: settings.kafkaBrokers },
        producerOnlyMode: true,
        send: { acks: -1 }, // acknowledged once every in-sync replica has the record
      },
    },
  ],
});
