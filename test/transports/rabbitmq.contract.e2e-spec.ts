import { randomBytes } from 'node:crypto';
import { connect, type ChannelModel } from 'amqplib';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import type { OutboxEnvelope } from '@nest-outbox/outbox';
import { describeOutboxTransportContract, type OpenTransport, type ReceivedMessage } from '@nest-outbox/outbox/testing';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { freePort } from '../support/free-port';
import { requireService } from '../support/services';
import { stringHeaders } from './transport-contract';

// One durable queue for this file (removed by RabbitMQ once unused for 5 minutes); each test
// publishes under a pattern of its own, and both sides declare the queue alike.
const QUEUE = `outbox-port-contract-${randomBytes(4).toString('hex')}`;
const QUEUE_OPTIONS = { durable: true, arguments: { 'x-expires': 300_000 } };

function rabbitTransport(url: string): OpenTransport {
  const client = ClientProxyFactory.create({
    transport: Transport.RMQ,
    options: { urls: [url], queue: QUEUE, queueOptions: QUEUE_OPTIONS, socketOptions: { reconnectTimeInSeconds: 1 } },
  });
  return { transport: new ClientProxyTransport(client), close: () => client.close() };
}

/** Reads the queue with amqplib, apart from Nest: what RabbitMQ holds, as any consumer would get it. */
async function openQueueReader(pattern: string) {
  const connection: ChannelModel = await connect(requireService('rabbitmq'));
  const channel = await connection.createChannel();
  await channel.assertQueue(QUEUE, QUEUE_OPTIONS);
  const received: ReceivedMessage[] = [];
  await channel.consume(QUEUE, (message) => {
    if (!message) return;
    // Nest's RMQ clients send `{ pattern, data }`; messages of other patterns belong to no test now running.
    const packet = JSON.parse(message.content.toString()) as { pattern: string; data: OutboxEnvelope };
    const headers = stringHeaders(message.properties.headers);
    if (packet.pattern === pattern) received.push({ envelope: packet.data, key: headers['outbox-key'], headers });
    channel.ack(message);
  });
  return { received, close: () => connection.close() };
}

describeOutboxTransportContract({
  name: 'ClientProxyTransport over ClientRMQ',
  createTransport: async () => rabbitTransport(requireService('rabbitmq')),
  openDestination: async () => {
    const pattern = `contract.${randomBytes(5).toString('hex')}`;
    const reader = await openQueueReader(pattern);
    return { name: pattern, received: async () => [...reader.received], close: reader.close };
  },
  batching: 'none',
  carries: { key: true, headers: true },
  unreachable: { createTransport: async () => rabbitTransport(`amqp://guest:guest@127.0.0.1:${await freePort()}`) },
  publishTimeoutMs: 3_000,
});
