/**
 * A small app in the WAL delivery mode (the demo has no WAL setting): its DataSource runs the outbox
 * migration under the migration lock, then the module sets up the slot. Reports `ready` over IPC, then every message it publishes; on `{ t: 'write', key }` it
 * adds one event in a transaction and answers `written` with its id.
 * Settings in STARTUP_CHILD: { url, slotName }.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { runMigrationsUnderLock } from '@nest-outbox/outbox/typeorm';

const { url, slotName } = JSON.parse(process.env.STARTUP_CHILD ?? '{}') as { url: string; slotName: string };

class ReportingTransport implements OutboxTransport {
  readonly name = 'reporting';
  async publish(message: OutgoingMessage): Promise<void> {
    process.send?.({ t: 'published', id: message.envelope.id });
  }
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: () => ({ type: 'postgres', url, extra: { max: 5 }, migrations: [CreateOutboxTable], migrationsRun: false, retryAttempts: 0, logging: false }),
      // As docs/migrations.md wires it: the migrations under the lock, before any module uses the tables.
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource(options as DataSourceOptions).initialize();
        await runMigrationsUnderLock(dataSource);
        return dataSource;
      },
    }),
    OutboxModule.forRoot({ transport: new ReportingTransport(), delivery: 'wal', wal: { slotName }, pollIntervalMs: 60_000 }),
  ],
})
class WalAppModule {}

NestFactory.createApplicationContext(WalAppModule, { logger: ['error'] }).then(
  (app) => {
    process.on('message', (message: { t: string; key: string }) => {
      if (message.t !== 'write') return;
      const event = { type: 'startup.checked', aggregateType: 'startup', aggregateId: message.key, payload: {}, topic: 'startup' };
      app
        .get(DataSource)
        .transaction((manager) => app.get(OutboxPublisher).add(manager, event))
        .then(([id]) => process.send?.({ t: 'written', id }), (error: unknown) => process.send?.({ t: 'failed', text: String(error) }));
    });
    process.send?.({ t: 'ready' });
  },
  (error: unknown) => {
    process.send?.({ t: 'failed', text: String(error) });
    process.exit(1);
  },
);
