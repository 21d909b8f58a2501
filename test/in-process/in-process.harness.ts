import type { Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable, OutboxInboxModule, OutboxModule, OutboxPublisher, type OutboxInboxModuleOptions, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { outboxMessageEntity } from '@nest-outbox/outbox/typeorm';

/** A Nest app with the outbox module and the given handler providers, on a database the test owns. */
export async function startHandlersApp(database: Partial<DataSourceOptions>, providers: Provider[], options: OutboxModuleOptions = {}, withInbox: boolean | OutboxInboxModuleOptions = false) {
  let module: TestingModule | undefined;
  try {
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...database, autoLoadEntities: true, migrations: [CreateOutboxTable, CreateInboxTable, CreateInboxPoisonTable], migrationsRun: true, logging: false } as TypeOrmModuleOptions),
        ...(withInbox ? [OutboxInboxModule.forRoot({ pruneIntervalMs: 0, ...(withInbox === true ? {} : withInbox) })] : []),
        OutboxModule.forRoot({
          pollIntervalMs: 200,
          backoff: { initialMs: 20, maxMs: 60, jitter: 0 },
          maxAttempts: 3,
          leaseMs: 3_000,
          publishTimeoutMs: 2_000,
          shutdownTimeoutMs: 300,
          ...options,
        }),
      ],
      providers,
    }).compile();
    module.useLogger(false);
    await module.init();
  } catch (error) {
    await module?.close();
    throw error;
  }
  const dataSource = module.get(DataSource);
  const publisher = module.get(OutboxPublisher);
  return {
    module,
    dataSource,
    /** Writes one event per payload, in one transaction. */
    add: (aggregateId: string, payloads: object[], type = 'parcels.parcel-registered') =>
      dataSource.transaction((manager) => publisher.add(manager, payloads.map((payload) => ({ type, aggregateType: 'parcel', aggregateId, payload })))),
    rows: () => dataSource.getRepository(outboxMessageEntity()).find({ order: { position: 'ASC' } }),
    close: () => module!.close(),
  };
}
