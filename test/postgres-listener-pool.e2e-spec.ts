import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { CreateOutboxTable, OutboxConfigurationError, OutboxModule } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { privatePostgresSchema } from './support/databases';
import { startupFailure } from './support/startup-failure';

/**
 * The relay's LISTEN connection comes from the app's pool and stays taken while the relay runs. On
 * a pool of one it would leave no connection for anything else: every query of the app would hang.
 */
describe('PostgreSQL: notifications on a pool of one connection', () => {
  let database: { url: string; schema: string; drop(): Promise<void> };

  beforeEach(async () => {
    database = await privatePostgresSchema('listener_pool');
  });

  afterEach(async () => {
    await database.drop();
  });

  const onePooledConnection = (): TypeOrmModuleOptions => ({
    type: 'postgres',
    url: database.url,
    schema: database.schema,
    extra: { options: `-c search_path=${database.schema}`, max: 1 },
    migrations: [CreateOutboxTable],
    migrationsRun: true,
    retryAttempts: 0,
  });

  it('refuses to start, naming the option and the pool size, before the LISTEN takes the connection', async () => {
    const failure = await startupFailure(onePooledConnection(), [OutboxModule.forRoot({ transport: new RecordingOutboxTransport() })]);

    expect(failure).toBeInstanceOf(OutboxConfigurationError);
    expect((failure as Error).message).toMatch(/option "notifications".*only connection of the data source's pool \(max 1\).*notifications: false/);
  });

  it('starts with notifications: false, the way out the error names', async () => {
    const failure = await startupFailure(onePooledConnection(), [OutboxModule.forRoot({ transport: new RecordingOutboxTransport(), notifications: false })]);

    expect(failure).toBeUndefined();
  });
});
