// A plain ES-module Nest app using the library as installed from its tarball: it saves one event
// through the explicit API on PostgreSQL and waits until its relay has published it to Kafka.
// Settings come from the environment; the last line printed is a JSON result for the test.
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';

const { DATABASE_URL, DATABASE_SCHEMA, KAFKA_BROKERS, TOPIC, AGGREGATE_ID } = process.env;

class AppModule {}
Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: DATABASE_URL,
      schema: DATABASE_SCHEMA,
      extra: { options: `-c search_path=${DATABASE_SCHEMA}` },
      autoLoadEntities: true,
      migrations: [CreateOutboxTable],
      migrationsRun: true,
      retryAttempts: 0,
    }),
    ClientsModule.register([
      {
        name: 'EVENTS',
        transport: Transport.KAFKA,
        options: { client: { clientId: 'packed-app', brokers: KAFKA_BROKERS.split(',') }, producerOnlyMode: true },
      },
    ]),
    OutboxModule.forRoot({ transport: 'EVENTS', pollIntervalMs: 200 }),
  ],
})(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
try {
  const dataSource = app.get(DataSource);
  await dataSource.transaction((manager) =>
    app.get(OutboxPublisher).add(manager, {
      type: 'packed.hello', aggregateType: 'greeting', aggregateId: AGGREGATE_ID, payload: { hello: 'from the tarball' }, topic: TOPIC,
    }),
  );
  const deadline = Date.now() + 60_000;
  let status;
  while (Date.now() < deadline) {
    [{ status }] = await dataSource.query('SELECT status FROM outbox_messages WHERE aggregate_id = $1', [AGGREGATE_ID]);
    if (status === 'published') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const library = createRequire(import.meta.url).resolve('@nest-outbox/outbox');
  console.log(JSON.stringify({ status, library }));
} finally {
  await app.close();
}
