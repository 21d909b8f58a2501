import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { postgresAdmin } from '../support/databases';
import { PrivatePostgres } from '../support/private-postgres';
import { CapturingLogger } from '../transports/transport-harness';
import { waitFor } from '../support/wait-for';

/**
 * An app whose database restarts while it starts: TypeORM has connected, and the server goes away
 * before the outbox's own start queries (the table probe, the check for a WAL slot left behind,
 * the slot's set-up) have run. They failed the init once, and the process with it (a chaos run's
 * replacement relay, started as PostgreSQL restarted). The start now waits for the server.
 */
describe.each(['table', 'wal'] as const)('an app started while PostgreSQL restarts: delivery %s', (delivery) => {
  let server: PrivatePostgres;
  let module: TestingModule | undefined;
  const schema = `start_restart_${delivery}`;

  beforeAll(async () => {
    server = await PrivatePostgres.start(`start-${delivery}`);
    await postgresAdmin(server.url(), `CREATE SCHEMA ${schema}`);
  }, 60_000);
  afterAll(async () => {
    await module?.close();
    await server?.cleanup();
  }, 60_000);

  it('waits for the server, starts, and publishes what is written after', async () => {
    const recording = new RecordingOutboxTransport();
    const logger = new CapturingLogger();
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: server.url(),
          schema,
          extra: { options: `-c search_path=${schema}`, max: 5 },
          migrations: [CreateOutboxTable],
          migrationsRun: true,
          retryAttempts: 0,
          logging: false,
        }),
        OutboxModule.forRoot({ delivery, wal: { slotName: `${schema}_slot` }, transport: recording, pollIntervalMs: 200 }),
      ],
    }).compile();
    module.useLogger(logger);

    // TypeORM is connected (compile ran its initialize); the outbox's start queries run in init().
    await server.end('fast');
    let initError: unknown;
    const init = module.init().then(
      () => 'started',
      (error: unknown) => ((initError = error), 'failed'),
    );
    const waiting = () => logger.entries.some((entry) => entry.level === 'warn' && entry.message.includes('found the database restarting'));
    // Without the wait, init fails at once with the refused connection.
    await waitFor('the start to wait for the database (or fail)', () => waiting() || initError !== undefined, 30_000);
    expect(initError).toBeUndefined();
    await server.begin();
    expect(await init).toBe('started');
    expect(logger.entries.some((entry) => entry.level === 'log' && /succeeded after the database came back/.test(entry.message))).toBe(true);

    const publisher = module.get(OutboxPublisher);
    const ids = await module.get(DataSource).transaction((manager) =>
      publisher.add(manager, [{ type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'p1', payload: { after: 'restart' }, topic: 'parcels' }]),
    );
    await waitFor('the event written after the start published', () => ids.every((id) => recording.published.some((message) => message.envelope.id === id)), 30_000);
  }, 120_000);
});
