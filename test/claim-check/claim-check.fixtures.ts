import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { Idempotent, type OutboxEnvelope, type OutboxModuleOptions } from '@nest-outbox/outbox';

/** What the @Idempotent() handler was given, after the inbox put the payload back. */
@Injectable()
export class LargeDocumentReader {
  readonly received: OutboxEnvelope[] = [];

  @Idempotent('claim-check-reader')
  async handle(envelope: OutboxEnvelope): Promise<void> {
    this.received.push(envelope);
  }
}

// About 5 MB of JSON: five times Kafka's default message limit, and more than the test broker keeps per partition.
export const largeDocument = () => ({ title: 'scan', pages: Array.from({ length: 5 }, () => randomBytes(768 * 1024).toString('base64')) });

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Every delivery the claim check must work in: the table, and the WAL mode's two writes. */
export const DELIVERY_MODES: Array<{ name: string; options: Partial<OutboxModuleOptions> }> = [
  { name: 'table delivery', options: { delivery: 'table', pollIntervalMs: 200 } },
  { name: "WAL delivery, write: 'row'", options: { delivery: 'wal', wal: { write: 'row' } } },
  { name: "WAL delivery, write: 'message'", options: { delivery: 'wal', wal: { write: 'message' } } },
];

/** Nest's Kafka client on the test broker, producer only, acknowledged by every in-sync replica. */
export const kafkaClientModule = (clientId: string, brokers: string[]) =>
  ClientsModule.register([{ name: 'KAFKA', transport: Transport.KAFKA, options: { client: { clientId, brokers }, producerOnlyMode: true, send: { acks: -1 } } }]);
