/**
 * One application instance in the WAL delivery mode, in a process of its own so that a test can
 * SIGKILL it: reports `ready`, then every message it publishes and every worker thread it starts,
 * to its parent over IPC; closes the app and exits 0 when sent `close`.
 * Settings in WAL_CHILD: { url, schema, slotName, wal? } (wal: more of OutboxModule's `wal` options);
 * WAL_CHILD_LOG=1 lets it log.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxModule, type OutboxModuleOptions, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { PARCEL_ENTITIES } from '../support/parcel.fixtures';

const { url, schema, slotName, wal } = JSON.parse(process.env.WAL_CHILD ?? '{}') as { url: string; schema: string; slotName: string; wal?: OutboxModuleOptions['wal'] };

// Never outlive the test that started it.
process.on('disconnect', () => process.exit(3));
process.on('worker', (worker: { threadId: number }) => process.send?.({ t: 'worker', threadId: worker.threadId }));

class ReportingTransport implements OutboxTransport {
  readonly name = 'reporting';
  async publish(message: OutgoingMessage): Promise<void> {
    process.send?.({ t: 'published', id: message.envelope.id, key: message.key, seq: (message.envelope.payload as { seq: number }).seq });
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}`, max: 5 }, entities: PARCEL_ENTITIES, logging: false }),
    OutboxModule.forRoot({ transport: new ReportingTransport(), delivery: 'wal', wal: { slotName, ...wal }, pollIntervalMs: 60_000, batchSize: 10 }),
  ],
})
class WalInstanceModule {}

void NestFactory.createApplicationContext(WalInstanceModule, { logger: process.env.WAL_CHILD_LOG ? ['log', 'warn', 'error'] : false }).then(
  (app) => {
    process.on('message', (message) => {
      if (message === 'close') void app.close().then(() => process.exit(0));
    });
    process.send?.({ t: 'ready' });
  },
  (error: unknown) => {
    process.send?.({ t: 'failed', text: String(error) });
    process.exit(1);
  },
);
