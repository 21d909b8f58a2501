/**
 * One application instance in the WAL delivery mode, in a process of its own so that a test can
 * SIGKILL it: reports `ready`, then every message it publishes, to its parent over IPC.
 * Settings in WAL_CHILD: { url, schema, slotName }.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxModule, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { PARCEL_ENTITIES } from '../support/parcel.fixtures';

const { url, schema, slotName } = JSON.parse(process.env.WAL_CHILD ?? '{}') as { url: string; schema: string; slotName: string };

// Never outlive the test that started it.
process.on('disconnect', () => process.exit(3));

class ReportingTransport implements OutboxTransport {
  readonly name = 'reporting';
  async publish(message: OutgoingMessage): Promise<void> {
    process.send?.({ t: 'published', id: message.envelope.id, key: message.key, seq: (message.envelope.payload as { seq: number }).seq });
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}`, max: 5 }, entities: PARCEL_ENTITIES, logging: false }),
    OutboxModule.forRoot({ transport: new ReportingTransport(), delivery: 'wal', wal: { slotName }, pollIntervalMs: 60_000, batchSize: 10 }),
  ],
})
class WalInstanceModule {}

void NestFactory.createApplicationContext(WalInstanceModule, { logger: false }).then(
  () => process.send?.({ t: 'ready' }),
  (error: unknown) => {
    process.send?.({ t: 'failed', text: String(error) });
    process.exit(1);
  },
);
